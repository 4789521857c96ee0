"""Server-side SVG charts: geometry only (numbers and labels); the templates draw and escape them."""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime, timedelta

from loopx_core.clock import iso
from loopx_core.quota import QuotaUsage

WIDTH = 720
HEIGHT = 200
LEFT = 40
BOTTOM = 28
TOP = 12
MAX_BARS = 48
"""A window longer than this many hours is drawn in buckets of several hours."""


@dataclass(frozen=True)
class Bar:
    """One bucket of the window: where it is drawn and what it holds."""

    x: float
    y: float
    width: float
    height: float
    slots: int
    label: str


@dataclass(frozen=True)
class QuotaChart:
    """Slots spent per bucket over the rolling window against the allowed (even-pace) line."""

    width: int
    height: int
    bars: tuple[Bar, ...]
    bucket_hours: int
    pace: float
    """Allowed slots per bucket at an even pace: `allowed_slots * bucket_hours / window_hours`."""
    pace_y: float
    top_value: int
    axis_y: float
    left: int
    start_label: str
    end_label: str


def quota_chart(usage: QuotaUsage) -> QuotaChart:
    """The chart of `usage`: its in-window spends bucketed from the window's start to now."""
    hours = usage.policy.window_hours
    buckets_wanted = max(1, math.ceil(hours - 1e-9))
    bucket_hours = max(1, math.ceil(buckets_wanted / MAX_BARS))
    count = max(1, math.ceil(buckets_wanted / bucket_hours))
    start = usage.now - timedelta(hours=hours)
    step = timedelta(hours=bucket_hours)
    slots = [0] * count
    for spend in usage.spends:
        index = min(count - 1, max(0, int((spend.at - start) / step)))
        slots[index] += spend.slots
    pace = usage.allowed_slots * bucket_hours / hours if hours else 0.0
    top = max(1, math.ceil(max([*slots, pace]) * 1.15))
    plot_w = WIDTH - LEFT - 8
    plot_h = HEIGHT - TOP - BOTTOM
    axis_y = TOP + plot_h
    slot_w = plot_w / count
    bars = []
    for index, value in enumerate(slots):
        h = plot_h * value / top
        begins = start + step * index
        bars.append(
            Bar(
                x=round(LEFT + index * slot_w + 1, 2),
                y=round(axis_y - h, 2),
                width=round(max(1.0, slot_w - 2), 2),
                height=round(h, 2),
                slots=value,
                label=f"{_hm(begins)}-{_hm(min(begins + step, usage.now))}: {value} slot(s)",
            )
        )
    return QuotaChart(
        width=WIDTH,
        height=HEIGHT,
        bars=tuple(bars),
        bucket_hours=bucket_hours,
        pace=round(pace, 2),
        pace_y=round(axis_y - plot_h * pace / top, 2),
        top_value=top,
        axis_y=axis_y,
        left=LEFT,
        start_label=iso(start),
        end_label=iso(usage.now),
    )


def _hm(at: datetime) -> str:
    return iso(at)[11:16]
