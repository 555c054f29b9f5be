// The throughput sparkline: records out per second in each 5-second slot of the last minute
// (the status's `history`, oldest first), as a tiny inline SVG.

import { s } from '/ui/dom.js';

const WIDTH = 72;
const HEIGHT = 18;
const SLOTS = 12;

function points(history) {
  const values = Array.isArray(history) ? history.slice(-SLOTS).map((v) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0)) : [];
  // No data yet: a flat baseline (an empty `points` is not drawn, and some engines warn).
  if (values.length === 0) return `0,${HEIGHT - 1} ${WIDTH},${HEIGHT - 1}`;
  const max = Math.max(...values);
  const step = WIDTH / (SLOTS - 1);
  // Right-aligned: the newest slot is always at the right edge, however many there are.
  const offset = SLOTS - values.length;
  return values
    .map((v, i) => {
      const x = (offset + i) * step;
      const y = max > 0 ? HEIGHT - 1 - (v / max) * (HEIGHT - 2) : HEIGHT - 1;
      return `${x.toFixed(1)},${y.toFixed(1)}`;
    })
    .join(' ');
}

function label(history) {
  const values = Array.isArray(history) ? history : [];
  if (!values.length) return 'no throughput history yet';
  const last = values[values.length - 1];
  return `records out per second over the last minute; now ${typeof last === 'number' ? last.toFixed(1) : '?'}`;
}

/** A new sparkline for `history`. */
export function sparkline(history) {
  const line = s('polyline', { points: points(history), class: 'spark-line' });
  const svg = s('svg', { class: 'spark', width: WIDTH, height: HEIGHT, viewBox: `0 0 ${WIDTH} ${HEIGHT}`, role: 'img' }, s('title', null, label(history)), line);
  svg.dataset.key = JSON.stringify(history ?? null);
  return svg;
}

/** Redraws a sparkline in place, only when its data changed. */
export function updateSparkline(svg, history) {
  const key = JSON.stringify(history ?? null);
  if (svg.dataset.key === key) return;
  svg.dataset.key = key;
  svg.querySelector('polyline').setAttribute('points', points(history));
  svg.querySelector('title').textContent = label(history);
}
