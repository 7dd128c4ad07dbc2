"""Dataset runs: a spec of worlds x trajectories x weathers x seeds recorded as MCAP + labels."""
