"""Real processes: workers stalled, signalled, killed and restarted; the console script,
the soak and the demo."""
