"""Generated deployment configs: OpenCode and agentgateway, from the one role matrix.

inputs.py reads what the configs are made of (role matrix, servers.toml, seeds); each
*_config.py turns that into one file's data; render.py turns data into bytes; generate.py
writes or checks the files. Nothing here decides a permission: router.agents.roles does.
"""
