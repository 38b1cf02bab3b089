"""Reading Prometheus metrics as a scraper does: over HTTP from a worker's /metrics, or
from the queue exporter's registry, parsed with prometheus_client's own text parser."""

from __future__ import annotations

import socket
import urllib.request

import psycopg
from prometheus_client import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from taskboard import metrics

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def listening(port: int) -> bool:
    with socket.socket() as sock:
        return sock.connect_ex(("127.0.0.1", port)) == 0


def parse(text: str) -> Samples:
    """Metrics text as (sample name, labels) -> value."""
    samples: Samples = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            samples[(sample.name, frozenset(sample.labels.items()))] = sample.value
    return samples


def scrape(port: int) -> Samples:
    """GET /metrics and parse it."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return parse(response.read().decode())


def exporter_samples(url: str) -> Samples:
    """One scrape of the queue exporter's collector on the database at `url`."""
    registry = metrics.exporter_registry(lambda: psycopg.connect(url, autocommit=True))
    return parse(generate_latest(registry).decode())


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)
