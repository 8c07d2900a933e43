#!/usr/bin/env python3
"""Writes examples/data/house_prices.csv, the synthetic data of the CSV
regression example: 1,000 houses with an area (m2), a number of rooms, an
age (years; empty for 3 % of them: unknown) and a distance to the centre
(km), and a price (thousands) that depends on them as prices do — more
area and rooms raise it, age and distance lower it — plus noise. Fixed
seed: the file is the same on every run."""
import csv
import random
import sys

rng = random.Random(20261124)
path = sys.argv[1] if len(sys.argv) > 1 else "examples/data/house_prices.csv"
with open(path, "w", newline="") as f:
    w = csv.writer(f, lineterminator="\n")
    w.writerow(["area", "rooms", "age", "distance", "price"])
    for _ in range(1000):
        area = rng.uniform(30, 220)
        rooms = max(1, min(8, round(area / 30 + rng.gauss(0, 0.8))))
        age = rng.uniform(0, 90)
        distance = rng.expovariate(1 / 8)
        price = (2.6 * area + 14 * rooms - 0.9 * age - 6.5 * distance
                 + 0.004 * area * max(0, 20 - distance) + rng.gauss(0, 18) + 60)
        shown_age = "" if rng.random() < 0.03 else f"{age:.0f}"
        w.writerow([f"{area:.1f}", rooms, shown_age, f"{distance:.2f}", f"{price:.1f}"])
