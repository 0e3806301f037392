"""Errors of the skills package; each names the file or skill and what is wrong."""

from router.errors import RouterError


class SkillError(RouterError):
    """A skill, lock file or mount target cannot be used as given."""


class SkillFolderError(SkillError):
    """A skill folder holds something that cannot be hashed or copied safely."""


class LockFileError(SkillError):
    """A .skill-lock.json or grimoire.lock file is missing, unreadable or malformed."""
