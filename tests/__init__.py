"""Taskboard's tests, in folders by what they test (each folder's __init__ says what)."""
