/* The live console page: xterm.js (static/vendor/xterm) on the node's console socket
   (consoles/socket.py). Binary frames are what the machine wrote; text frames are JSON
   about the session: hello, status, keyboard (whether this page may type, and who does),
   closed (why the server ended it). */
(function () {
  "use strict";

  function start() {
    var box = document.getElementById("console-terminal");
    if (!box || !window.Terminal) {
      return;
    }
    var state = document.getElementById("console-state");
    var keyboard = document.getElementById("console-keyboard");
    var take = document.getElementById("console-take");
    var again = document.getElementById("console-again");
    var term = new window.Terminal({ cursorBlink: true, scrollback: 5000, fontSize: 14 });
    var fit = new window.FitAddon.FitAddon();
    term.loadAddon(fit);
    term.open(box);
    box.corralTerminal = term; // what the browser tests read the whole buffer from
    fit.fit();
    window.addEventListener("resize", function () { fit.fit(); });
    var encoder = new TextEncoder();
    var ws = null;
    var writer = false;
    var ended = "";

    function say(text, kind) {
      state.textContent = text;
      state.className = "badge text-bg-" + (kind || "secondary");
    }

    function keyboardIs(mine, holder) {
      writer = mine;
      term.options.disableStdin = !mine;
      keyboard.textContent = mine ? "You have the keyboard." :
        "Read-only: " + (holder || "another session") + " has the keyboard.";
      take.hidden = mine;
    }

    function heard(message) {
      if (message.hello !== undefined) {
        say("Attaching to " + message.hello + "…");
      }
      if (message.status !== undefined) {
        say(message.status === "attached" ? "Attached" : message.status,
          message.status === "attached" ? "success" : "warning");
      }
      if (message.keyboard !== undefined) {
        keyboardIs(message.keyboard, message.holder);
      }
      if (message.closed !== undefined) {
        ended = message.closed;
      }
    }

    function connect() {
      var scheme = window.location.protocol === "https:" ? "wss://" : "ws://";
      ended = "";
      again.hidden = true;
      say("Connecting…");
      ws = new WebSocket(scheme + window.location.host + box.dataset.socket);
      ws.binaryType = "arraybuffer";
      ws.onmessage = function (event) {
        if (typeof event.data === "string") {
          heard(JSON.parse(event.data));
        } else {
          term.write(new Uint8Array(event.data));
        }
      };
      ws.onclose = function () {
        keyboardIs(false, "nobody");
        keyboard.textContent = "";
        take.hidden = true;
        again.hidden = false;
        say(ended ? "Closed: " + ended : "Disconnected: refused, or the server went away",
          "danger");
      };
    }

    term.onData(function (data) {
      if (ws && ws.readyState === WebSocket.OPEN && writer) {
        ws.send(encoder.encode(data));
      }
    });
    take.addEventListener("click", function () {
      if (ws && ws.readyState === WebSocket.OPEN) {
        ws.send(JSON.stringify({ take: true }));
      }
    });
    again.addEventListener("click", connect);
    connect();
    term.focus();
  }

  document.addEventListener("DOMContentLoaded", start);
}());
