"""What a benchmark point runs, interpreted (issue 29).

One product: a `Trace` of one benchmark point at one tree. The interpreter starts at the runner
with the point's variable values and evaluates every script, function, sourced file, container
invocation, srt-slurm recipe and setup script down to the server processes and the benchmark
client, recording each effect with its file:line and the call chain that led there, and every
value, branch or command it could not resolve as an explicit unknown.

Modules:
- `words`: a shell word's value, known text or an explicit `Unknown` with its reason.
- `effects`: what one command does (`CommandEffects`), the vocabulary's answer.
- `vocabulary`: the one table of command semantics (every command of the real history's
  scripts, classified once); a name not in it is unknown.
"""
