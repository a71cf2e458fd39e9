"""webview — armweb's modules: armd_link (the connection to armd), fanout (events to the
browsers), metrics (Prometheus text), server (HTTP), main (command line)."""
