"""The web side: the dashboard over HTTP and in a browser, and the web-framework examples."""
