"""/metrics on `serve --http`: the Prometheus text format of what the router's file holds."""
