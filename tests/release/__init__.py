"""What is released: packaging, install, Sqitch, upgrades, the schema and function files,
the docs and the README, and the dev tooling."""
