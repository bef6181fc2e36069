"""The examples' tests run with the suite (pyproject's testpaths). examples/user_package is a project of
its own: `make test` installs it and runs its tests from its directory, as a user would, so it is not
collected here too."""
collect_ignore = ["user_package"]
