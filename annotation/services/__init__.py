"""Writes for the annotation app, split by subdomain."""
