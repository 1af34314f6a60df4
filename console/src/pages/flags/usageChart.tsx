import { useEffect, useRef } from 'preact/hooks';
import type uPlot from 'uplot';
// uPlot's own stylesheet is 1 KB; its script (50 KB) is loaded on first use below.
import 'uplot/dist/uPlot.min.css';

export type Series = { label: string; days: string[]; data: number[] };

// uPlot's default palette is too light on white; these keep ≥ 3:1 against the background.
const COLOURS = ['#1d4ed8', '#b45309', '#047857', '#7c3aed', '#be123c', '#374151'];

/**
 * One usage tile as a uPlot line chart, loaded on first use so the console's first page stays small. The canvas is
 * hidden from assistive technology: the same numbers are in the table beside it.
 */
export function UsageChart({ title, series }: { title: string; series: Series[] }) {
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    let chart: uPlot | undefined;
    let cancelled = false;
    void import('uplot').then(({ default: UPlot }) => {
      if (cancelled || !box.current || series.length === 0) return;
      const xs = series[0]!.days.map((d) => Date.parse(d) / 1000);
      chart = new UPlot(
        {
          width: Math.min(box.current.clientWidth || 600, 800),
          height: 220,
          series: [
            {},
            ...series.map((s, i) => ({
              label: s.label,
              stroke: COLOURS[i % COLOURS.length]!,
              width: 2,
            })),
          ],
          axes: [{}, { size: 50 }],
        },
        [xs, ...series.map((s) => s.data)],
        box.current,
      );
    });
    return () => {
      cancelled = true;
      chart?.destroy();
    };
  }, [series]);
  return (
    <figure class="usage-tile">
      <figcaption>{title}</figcaption>
      <div ref={box} aria-hidden="true" />
      <details>
        <summary>The numbers</summary>
        <table>
          <caption class="visually-hidden">{title}</caption>
          <thead>
            <tr>
              <th scope="col">Series</th>
              <th scope="col">Total</th>
            </tr>
          </thead>
          <tbody>
            {series.map((s) => (
              <tr key={s.label}>
                <th scope="row">{s.label}</th>
                <td>{s.data.reduce((a, b) => a + b, 0)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </details>
    </figure>
  );
}
