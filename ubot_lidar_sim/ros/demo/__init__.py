"""The demo: driver node (loop and weather scenario), monitor, status, snapshots."""
