"""Reusable API test machinery (NetBox style): declare a viewset once, inherit its tests."""
