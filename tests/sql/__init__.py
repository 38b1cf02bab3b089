"""The SQL API through a connection: the functions, races between sessions, and the
driver's calls of them."""
