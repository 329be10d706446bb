"""What a benchmark point's launch path is, read from the repository at one tree.

The interpreter (`recipes.launch`) gives each point a trace; this package finds which points a
PR may reach (the textual reach rule as a prefilter, the probes, and `trace_affected`, where the
trace decides), resolves the scripts, recipes and srt-slurm checkout a point's launch names, and
builds the serving view the checks read (`serving`): parsed recipe and master-config values, the
servers and clients of the trace, and the script reading kept for a point the review's step
budget leaves untraced. Pure: no network, no GitHub; `ctx` is any object shaped like
`checks.context.ReviewContext` (its snapshot, repositories, config and memo).
"""
