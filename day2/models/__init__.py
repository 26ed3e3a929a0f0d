from .campaigns import Campaign, CampaignNode, CampaignStatus, MemberStatus

__all__ = ["Campaign", "CampaignNode", "CampaignStatus", "MemberStatus"]
