"""The keys the catalog stores for the JSON Schema draft a tool's arguments are checked under
(tools.arg_validator). Apart from router/catalog/schema_drafts.py, which maps them to
validators: `inspect` names the draft without importing jsonschema, which costs a command
line tool a fifth of its start-up."""

DEFAULT_DRAFT = "draft2020-12"
# arguments of a tool whose schema no validator accepts are forwarded unchecked
UNCHECKED = "unchecked"
