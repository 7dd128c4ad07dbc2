"""The demo: driver node (loop and weather scenario), all-in-one runner, monitor, snapshots."""
