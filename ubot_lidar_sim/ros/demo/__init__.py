"""The demo: driver node (loop and weather scenario), fleet, monitor, status, snapshots."""
