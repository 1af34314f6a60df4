/** A page the console does not have yet (issue #30 adds them one by one). */
export const NotBuilt = ({ title }: { title: string }) => (
  <section aria-labelledby="page-title">
    <h1 id="page-title">{title}</h1>
    <p class="state empty" role="status">
      This page is not built yet. The API serves it already: see{' '}
      <a href="/api/schema/swagger-ui/">the API reference</a>.
    </p>
  </section>
);
