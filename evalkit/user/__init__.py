"""A simulated user the agent can ask (`ask_user`): what it knows of a task (context), who answers
(oracle-user, or a model), how each answer is classed and cleaned of the reference change."""
