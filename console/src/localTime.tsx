/** An instant in the reader's own time zone and locale; the exact ISO time stays in `dateTime`. */
export const LocalTime = ({ iso }: { iso: string }) => (
  <time dateTime={iso}>{new Date(iso).toLocaleString()}</time>
);
