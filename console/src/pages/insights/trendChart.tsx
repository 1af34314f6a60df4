import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';

/** Series colours, each at least 4.5:1 on white. */
export const COLOURS = ['#1d4ed8', '#b45309', '#047857', '#7c3aed', '#be123c', '#0e7490'];
export const colourOf = (i: number) => COLOURS[i % COLOURS.length]!;

/** The share of an interval a group of bars takes. */
const BAR_GROUP = 0.8;
// uPlot's BarsPathBuilderFacetUnit.ScaleValue (a const enum, which isolated modules cannot read)
const SCALE_VALUE = 1 as uPlot.Series.BarsPathBuilderFacetUnit;

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
    const xs = labels.map((_, i) => i);
    const group = BAR_GROUP / series.length;
    // grouped bars: series s's bar starts at x − BAR_GROUP/2 + s × its width (in x's units)
    const barsOf = (s: number) =>
      UPlot.paths.bars!({
        disp: {
          x0: { unit: SCALE_VALUE, values: () => xs.map((x) => x - BAR_GROUP / 2 + s * group) },
          size: { unit: SCALE_VALUE, values: () => [group] },
        },
      });
    const options: uPlot.Options = {
      width: Math.max(320, el.clientWidth),
      height: 280,
      // half an interval of room at each end, so the first and last bars and labels are not cut
      scales: { x: { time: false, range: (_u, min, max) => [min - 0.5, max + 0.5] } },
      cursor: { drag: { x: false, y: false } },
      legend: { show: series.length > 1 },
      axes: [
        {
          incrs: [1, 2, 3, 4, 6, 7, 12, 14, 24, 30, 60, 100, 200, 500, 1000],
          values: (_u, splits) => splits.map((i) => labels[i] ?? ''),
          stroke: '#4b5563',
        },
        // counts: whole-number ticks
        {
          stroke: '#4b5563',
          incrs: [1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9],
        },
      ],
      series: [
        { label: 'Interval', value: (_u, i) => labels[i] ?? '' },
        ...series.map((s, i) => ({
          label: s.label,
          stroke: colourOf(i),
          width: 2,
          ...(display === 'bar'
            ? { paths: barsOf(i), fill: `${colourOf(i)}cc`, points: { show: false } }
            : {}),
        })),
      ],
      hooks: { ready: [(u) => u.over.addEventListener('click', () => clicked(u))] },
    };
    const chart = new UPlot(options, [xs, ...series.map((s) => s.data)], el);
    const resize = new ResizeObserver(() =>
      chart.setSize({ width: Math.max(320, el.clientWidth), height: 280 }),
    );
    resize.observe(el);
    return [chart, resize];
  }

  /** The point under the cursor: for bars the bar its x falls in, for lines the series nearest in height. */
  function clicked(u: uPlot) {
    const idx = u.cursor.idx;
    if (idx === null || idx === undefined || series.length === 0) return;
    if (display === 'bar') {
      const x = u.posToVal(u.cursor.left ?? 0, 'x') - (idx - BAR_GROUP / 2);
      const s = Math.floor((x / BAR_GROUP) * series.length);
      return pick.current(Math.min(series.length - 1, Math.max(0, s)), idx);
    }
    let nearest = 0;
    let distance = Number.POSITIVE_INFINITY;
    series.forEach((s, i) => {
      const value = s.data[idx];
      if (value === undefined) return;
      const d = Math.abs(u.valToPos(value, 'y') - (u.cursor.top ?? 0));
      if (d < distance) [nearest, distance] = [i, d];
    });
    pick.current(nearest, idx);
  }

  return <div class="trend-chart" ref={box} />;
}
