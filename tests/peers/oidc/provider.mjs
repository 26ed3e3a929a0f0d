// A real OpenID Provider for Corral's single sign-on tests: panva's oidc-provider (OpenID
// Certified), configured from the JSON in OIDC_PEER_CONFIG by tests/peers/oidc.py:
//   { "host", "port", "issuer",
//     "clients": [{ "client_id", "client_secret", "redirect_uris": [...] }],
//     "accounts": { "<login>": { "password", "claims": { "sub", ... } } } }
// A test changes what the provider knows of people (their groups) with
// PUT /peer/accounts and the same "accounts" object, as an admin would at a real one.
// Authorization code flow only, PKCE required for every client. The login and consent
// pages are this file's own (not the library's development ones, which take any login):
// a login is checked against the account's password, consent grants what was asked.
import crypto from 'node:crypto';
import http from 'node:http';

import Provider from 'oidc-provider';

const config = JSON.parse(process.env.OIDC_PEER_CONFIG);
let byLogin = {};
let bySub = {};
function setAccounts(accounts) {
  byLogin = accounts;
  bySub = Object.fromEntries(Object.values(accounts).map((a) => [a.claims.sub, a]));
}
setAccounts(config.accounts);

const { privateKey } = crypto.generateKeyPairSync('rsa', { modulusLength: 2048 });
const signingKey = { ...privateKey.export({ format: 'jwk' }), kid: 'peer-1', use: 'sig', alg: 'RS256' };

const provider = new Provider(config.issuer, {
  clients: config.clients.map((c) => ({
    ...c,
    grant_types: ['authorization_code'],
    response_types: ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  jwks: { keys: [signingKey] },
  cookies: { keys: [crypto.randomBytes(32).toString('hex')] },
  pkce: { required: () => true },
  scopes: ['openid', 'email', 'profile', 'groups'],
  claims: {
    openid: ['sub'],
    email: ['email', 'email_verified'],
    profile: ['name', 'given_name', 'family_name', 'preferred_username'],
    groups: ['groups'],
  },
  features: { devInteractions: { enabled: false } },
  interactions: { url: (ctx, interaction) => `/interaction/${interaction.uid}` },
  async findAccount(ctx, sub) {
    const account = bySub[sub];
    if (!account) return undefined;
    return { accountId: sub, claims: async () => ({ ...account.claims, sub }) };
  },
});
provider.on('server_error', (ctx, err) => console.error('server_error', err));

const escape = (s) => String(s).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);

function page(res, title, body, status = 200) {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' });
  res.end(`<!doctype html><html><head><title>${escape(title)}</title><link rel="icon" href="data:,"></head>
<body><h1>${escape(title)}</h1>${body}</body></html>`);
}

async function readBody(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

const form = async (req) => new URLSearchParams(await readBody(req));

function loginPage(res, uid, error = '') {
  page(res, 'Sign in to the test provider', `${error ? `<p id="error">${escape(error)}</p>` : ''}
<form method="post" action="/interaction/${uid}/login">
  <label>Login <input name="login" id="login" autocomplete="username"></label>
  <label>Password <input name="password" id="password" type="password"></label>
  <button type="submit" id="sign-in">Sign in</button>
</form>`, error ? 401 : 200);
}

async function consentGrant(details) {
  const { prompt: { details: missing }, grantId, session, params } = details;
  const grant = grantId
    ? await provider.Grant.find(grantId)
    : new provider.Grant({ accountId: session.accountId, clientId: params.client_id });
  if (missing.missingOIDCScope) grant.addOIDCScope(missing.missingOIDCScope.join(' '));
  if (missing.missingOIDCClaims) grant.addOIDCClaims(missing.missingOIDCClaims);
  return grant.save();
}

async function interaction(req, res, url) {
  const [, , uid, step] = url.pathname.split('/');
  const details = await provider.interactionDetails(req, res);
  if (req.method === 'GET' && details.prompt.name === 'login') return loginPage(res, uid);
  if (req.method === 'GET') {
    const client = details.params.client_id;
    return page(res, 'Allow access', `<p>${escape(client)} asks for: ${escape(details.params.scope)}</p>
<form method="post" action="/interaction/${uid}/confirm"><button type="submit" id="allow">Allow</button></form>`);
  }
  const body = await form(req);
  if (step === 'login') {
    const account = byLogin[body.get('login')];
    if (!account || account.password !== body.get('password')) {
      return loginPage(res, uid, 'Wrong login or password.');
    }
    const result = { login: { accountId: account.claims.sub } };
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: false });
  }
  if (step === 'confirm') {
    const result = { consent: { grantId: await consentGrant(details) } };
    return provider.interactionFinished(req, res, result, { mergeWithLastSubmission: true });
  }
  return page(res, 'Not found', '', 404);
}

const callback = provider.callback();
const server = http.createServer((req, res) => {
  const url = new URL(req.url, config.issuer);
  if (url.pathname === '/peer/accounts' && req.method === 'PUT') {
    return readBody(req).then((body) => {
      setAccounts(JSON.parse(body));
      res.writeHead(204).end();
    });
  }
  if (!url.pathname.startsWith('/interaction/')) return callback(req, res);
  return interaction(req, res, url).catch((err) => {
    console.error('interaction failed', err);
    page(res, 'Interaction failed', `<p>${escape(err.message)}</p>`, 400);
  });
});
server.listen(config.port, config.host, () => console.log(`listening on ${config.host}:${config.port}`));
for (const signal of ['SIGTERM', 'SIGINT']) process.on(signal, () => server.close(() => process.exit(0)));
