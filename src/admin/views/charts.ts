import { html, type SafeHtml } from '../html.js';
import { num, percent } from './format.js';

/**
 * Horizontal bar charts as inline SVG. Each bar has its label and number written beside it, so the chart reads
 * the same without colour; the figure's accessible name is its title and its description lists every value.
 * A bar's length is its share of the whole (the total), as the percentage beside it says: scaled to the largest
 * bar, 30% would fill the track whenever it is the largest share and read as "everything".
 */

export interface Bar {
  label: string;
  value: number;
  /** CSS class picking the bar's fill; meaning never depends on it. */
  tone: string;
}

export interface BarChartOptions {
  id: string;
  title: string;
  bars: readonly Bar[];
  /** Shares are shown against this (defaults to the sum of the bars). */
  total?: number;
  /** Said when every bar is zero. */
  emptyText?: string;
}

const WIDTH = 480;
const ROW = 48;
const LABEL_Y = 18;
const BAR_Y = 25;
const BAR_H = 14;

export function barChart(o: BarChartOptions): SafeHtml {
  const total = o.total ?? o.bars.reduce((s, b) => s + b.value, 0);
  // The whole, or the largest bar when a given total is smaller (a bar never overflows its track).
  const whole = Math.max(1, total, ...o.bars.map((b) => b.value));
  const height = o.bars.length * ROW + 4;
  const describe = (b: Bar) => `${b.label}: ${num(b.value)} (${percent(b.value, total)})`;
  const description =
    total === 0 && o.emptyText ? o.emptyText : `${o.bars.map(describe).join('; ')}. Total ${num(total)}.`;
  const rows = o.bars.map((b, i) => {
    const y = i * ROW;
    const w = b.value === 0 ? 0 : Math.max(2, Math.round((b.value / whole) * WIDTH));
    return html`<g class="chart-row">
      <text x="0" y="${y + LABEL_Y}" class="chart-label">${b.label}</text>
      <text x="${WIDTH}" y="${y + LABEL_Y}" class="chart-value" text-anchor="end">${num(b.value)} (${percent(b.value, total)})</text>
      <rect x="0" y="${y + BAR_Y}" width="${WIDTH}" height="${BAR_H}" class="chart-track" rx="2"></rect>
      <rect x="0" y="${y + BAR_Y}" width="${w}" height="${BAR_H}" class="chart-bar ${b.tone}" rx="2"></rect>
    </g>`;
  });
  return html`<figure class="chart" id="${o.id}">
    <figcaption>${o.title}</figcaption>
    <svg viewBox="0 0 ${WIDTH} ${height}" role="img" aria-labelledby="${o.id}-title" aria-describedby="${o.id}-desc" preserveAspectRatio="xMinYMin meet">
      <title id="${o.id}-title">${o.title}</title>
      <desc id="${o.id}-desc">${description}</desc>
      ${rows}
    </svg>
  </figure>`;
}
