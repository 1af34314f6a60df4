// uPlot and its stylesheet in a chunk of their own: loaded when a chart is first drawn, not with the console.
import 'uplot/dist/uPlot.min.css';

export { default } from 'uplot';
