#!/usr/bin/env bash
# Sandbox stand-in for the shared AgentX client: replays the trace named by
# WEKA_LOADER_OVERRIDE against the served model through the chat endpoint.
set -euo pipefail
exec python3 -m aiperf profile --scenario agentx-chat --model "${MODEL}" --concurrency "${CONC}"
