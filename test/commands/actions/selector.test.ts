import { describe, expect, it } from 'vitest';
import { SelectorError, selectorChainRegex } from '../../../commands/actions/model/selector.ts';
import { elementsToString } from '../../../commands/capture/model/elementsChain.ts';

// A click on a span inside a button inside a form inside a div, as posthog-js sends it.
const chain = elementsToString([
  { tag_name: 'span', text: 'Buy', nth_child: 1, nth_of_type: 1 },
  {
    tag_name: 'button',
    attr_class: ['btn', 'btn-primary', 'w-1/2'],
    attr_id: 'buy',
    attributes: {
      attr__id: 'buy',
      'attr__data-attr': 'buy "now"',
      attr__class: 'btn btn-primary w-1/2',
    },
    nth_child: 2,
    nth_of_type: 1,
  },
  { tag_name: 'form', attr_class: ['checkout'], nth_child: 1, nth_of_type: 1 },
  { tag_name: 'div', attr_class: ['page'], nth_child: 1, nth_of_type: 1 },
]);
const matches = (selector: string) => new RegExp(selectorChainRegex(selector)).test(chain);

describe('selectorChainRegex', () => {
  it('matches the clicked element or an ancestor by tag, class, id and attribute', () => {
    expect(chain).toContain('button.btn.btn-primary.w-1/2:');
    for (const s of [
      'span',
      'button',
      '*',
      '.btn',
      'button.btn-primary.btn',
      '#buy',
      'button#buy.btn',
      '[data-attr="buy \\"now\\""]',
      `[data-attr='buy "now"']`,
      '[data-attr]',
      'button:nth-child(2)',
      'form > button',
      'form>button > span',
      'div button',
      'div span',
      'div.page form.checkout > button#buy',
    ])
      expect(matches(s), s).toBe(true);
  });

  it('refuses what the chain does not hold', () => {
    for (const s of [
      'a',
      'butto',
      '.bt',
      '.btn-primar',
      '#bu',
      '[data-attr=buy]',
      'button:nth-child(1)',
      'div > button',
      'span button',
      'button form',
      'div > form > span',
    ])
      expect(matches(s), s).toBe(false);
  });

  it('throws on what it cannot read', () => {
    for (const s of ['', 'a:hover', '> a', 'a >', 'a > > b', 'a[', 'a!b'])
      expect(() => selectorChainRegex(s), s).toThrow(SelectorError);
  });
});
