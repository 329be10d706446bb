"""The bash analysis behind recipes.scripts, by concern: result types (model), literal values
(values), the tree walk (walker), per-command semantics (commands) and launch/pip/patch
detection (detect). Import the public API from recipes.scripts."""
