import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

/** Series colours, each at least 4.5:1 on white. */
export const COLOURS = ['#1d4ed8', '#b45309', '#047857', '#7c3aed', '#be123c', '#0e7490'];
export const colourOf = (i: number) => COLOURS[i % COLOURS.length]!;

export type ChartSeries = { label: string; data: number[] };

/**
 * A trend drawn by uPlot (docs/DECISIONS.md, "Console libraries"): x is the interval's index, labelled with the API's
 * labels. A click picks the point under the cursor: its interval, and of several series the one nearest in height.
 * The table under the chart offers the same points to the keyboard and to screen readers.
 */
export function TrendChart({
  labels,
  series,
  display,
  onPick,
}: {
  labels: string[];
  series: ChartSeries[];
  display: 'line' | 'bar';
  onPick: (seriesIndex: number, pointIndex: number) => void;
}) {
  const box = useRef<HTMLDivElement>(null);
  // the latest handler, so the chart is not rebuilt when only the callback's closure changed
  const pick = useRef(onPick);
  pick.current = onPick;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    let chart: uPlot | undefined;
    let resize: ResizeObserver | undefined;
    let cancelled = false;
    void import('./uplot.ts').then(({ default: UPlot }) => {
      if (!cancelled) [chart, resize] = draw(UPlot, el);
    });
    return () => {
      cancelled = true;
      resize?.disconnect();
      chart?.destroy();
    };
  }, [labels, series, display]);

  function draw(UPlot: typeof uPlot, el: HTMLDivElement): [uPlot, ResizeObserver] {
    const bars = display === 'bar' ? UPlot.paths.bars!({ size: [0.7, 80] }) : undefined;
    const options: uPlot.Options = {
      width: Math.max(320, el.clientWidth),
      height: 280,
      scales: { x: { time: false } },
      cursor: { drag: { x: false, y: false } },
      legend: { show: series.length > 1 },
      axes: [
        {
          values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
          stroke: '#4b5563',
        },
        { stroke: '#4b5563' },
      ],
      series: [
        { label: 'Interval', value: (_u, i) => labels[i] ?? '' },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: colourOf(i),
          width: 2,
          ...(bars ? { paths: bars, fill: `${colourOf(i)}99`, points: { show: false } } : {}),
        })),
      ],
      hooks: {
        ready: [
          (u) =>
            u.over.addEventListener('click', () => {
              const idx = u.cursor.idx;
              if (idx === null || idx === undefined) return;
              let nearest = 1;
              let distance = Number.POSITIVE_INFINITY;
              for (let s = 1; s < u.series.length; s++) {
                const value = u.data[s]?.[idx];
                if (value === null || value === undefined) continue;
                const d = Math.abs(u.valToPos(value, 'y') - (u.cursor.top ?? 0));
                if (d < distance) [nearest, distance] = [s, d];
              }
              pick.current(nearest - 1, idx);
            }),
        ],
      },
    };
    const data: uPlot.AlignedData = [labels.map((_, i) => i), ...series.map((s) => s.data)];
    const chart = new UPlot(options, data, el);
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(320, el.clientWidth), height: 280 }),
    );
    resize.observe(el);
    return [chart, resize];
  }

  return <div class="trend-chart" ref={box} />;
}
