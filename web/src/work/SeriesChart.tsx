import { useEffect, useRef } from 'react';
import uPlot from 'uplot';
import 'uplot/dist/uPlot.min.css';

/** A colour per line, each readable on white (4.5:1 at least) and told apart by its legend label too. */
const COLOURS = ['#4338ca', '#067647', '#b42318', '#93370d', '#0e7490', '#7c3aed', '#be185d', '#4d7c0f', '#1d4ed8', '#334155'];

export interface ChartLine {
  label: string;
  /** One per bucket; null (unknown) is a gap in the line, never drawn as zero. */
  values: (number | null)[];
}

/**
 * One channel's counts over time as lines (uPlot, loaded with the Results page's chart chunk only). The canvas is
 * hidden from assistive technology: the figure's caption and table beside it carry the same numbers. `utc`: the
 * buckets are UTC days, so the axis reads them in UTC.
 */
export default function SeriesChart({ buckets, lines, utc }: { buckets: number[]; lines: ChartLine[]; utc: boolean }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const size = () => ({ width: Math.max(240, el.clientWidth), height: 180 });
    const plot = new uPlot(
      {
        ...size(),
        ms: 1,
        ...(utc ? { tzDate: (ts: number) => uPlot.tzDate(new Date(ts), 'Etc/UTC') } : {}),
        // The legend names the lines; the numbers under the pointer are in the table beside the chart.
        legend: { live: false },
        scales: { x: { time: true }, y: { range: (_u, _min, max) => [0, Math.max(1, max)] } },
        axes: [{}, { values: (_u, ticks) => ticks.map((t) => (Number.isInteger(t) ? t.toLocaleString() : '')) }],
        series: [
          {},
          ...lines.map((l, i) => ({
            label: l.label,
            stroke: COLOURS[i % COLOURS.length],
            width: 2,
            points: { show: true, size: 5 },
          })),
        ],
      },
      [buckets, ...lines.map((l) => l.values)] as uPlot.AlignedData,
      el,
    );
    const watch = new ResizeObserver(() => plot.setSize(size()));
    watch.observe(el);
    return () => {
      watch.disconnect();
      plot.destroy();
    };
  }, [buckets, lines, utc]);
  return <div ref={box} className="series-chart" aria-hidden="true" />;
}
