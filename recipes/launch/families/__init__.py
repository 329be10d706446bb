"""The handlers of the launch vocabulary (`recipes.launch.vocabulary`), by family of commands: the
table itself, one entry per name, is in the vocabulary; these modules only read words."""
