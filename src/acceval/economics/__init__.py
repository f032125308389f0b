"""economics"""
