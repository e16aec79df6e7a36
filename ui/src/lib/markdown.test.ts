import { describe, expect, it } from 'vitest';
import { renderMarkdown } from './markdown';

describe('renderMarkdown', () => {
  it('renders code and emphasis', () => {
    const html = renderMarkdown('It is `waitForAnswer`, **line 675**.\n\n```js\nx()\n```');
    expect(html).toContain('<code>waitForAnswer</code>');
    expect(html).toContain('<strong>line 675</strong>');
    expect(html).toContain('<pre><code class="language-js">x()');
  });

  it('escapes raw HTML and does not make links or images', () => {
    const html = renderMarkdown('<script>alert(1)</script> [x](javascript:alert(1)) ![i](http://127.0.0.1/a.png)');
    expect(html).not.toContain('<script>');
    expect(html).toContain('&lt;script&gt;');
    expect(html).not.toContain('<a ');
    expect(html).not.toContain('<img');
  });
});
