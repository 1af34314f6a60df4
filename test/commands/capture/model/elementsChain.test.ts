import { describe, expect, it } from 'vitest';
import {
  chainToElements,
  type ElementView,
  elementsChainOf,
  elementsToChain,
  elementsToString,
  extractElements,
} from '../../../../commands/capture/model/elementsChain.ts';

const view = (order: number, fields: Partial<ElementView>): ElementView => ({
  event: null,
  text: null,
  tag_name: null,
  attr_class: null,
  href: null,
  attr_id: null,
  nth_child: null,
  nth_of_type: null,
  attributes: {},
  order,
  ...fields,
});

// PostHog nodejs `elements-chain.test.ts` cases, with the same inputs and expected strings.
describe('elementsToString / chainToElements (PostHog test cases)', () => {
  it('is reversible', () => {
    const chain = elementsToString([
      {
        tag_name: 'a',
        href: '/a-url',
        attr_class: ['small'],
        text: 'bla bla',
        attributes: {
          prop: 'value',
          number: 33,
          'data-attr': 'something " that; could mess up',
          style: 'min-height: 100vh;',
        },
        nth_child: 1,
        nth_of_type: 0,
      },
      { tag_name: 'button', attr_class: ['btn', 'btn-primary'], nth_child: 0, nth_of_type: 0 },
      { tag_name: 'div', nth_child: 0, nth_of_type: 0 },
      { tag_name: 'div', nth_child: 0, nth_of_type: 0, attr_id: 'nested' },
    ]);
    expect(chain).toBe(
      [
        'a.small:data-attr="something \\" that; could mess up"href="/a-url"nth-child="1"nth-of-type="0"number="33"prop="value"style="min-height: 100vh;"text="bla bla"',
        'button.btn.btn-primary:nth-child="0"nth-of-type="0"',
        'div:nth-child="0"nth-of-type="0"',
        'div:attr_id="nested"nth-child="0"nth-of-type="0"',
      ].join(';'),
    );

    const elements = chainToElements(chain);
    expect(elements).toEqual([
      view(0, {
        tag_name: 'a',
        attr_class: ['small'],
        href: '/a-url',
        text: 'bla bla',
        nth_child: 1,
        nth_of_type: 0,
        // PostHog does not unescape `\"` either
        attributes: {
          'data-attr': 'something \\" that; could mess up',
          number: '33',
          prop: 'value',
          style: 'min-height: 100vh;',
        },
      }),
      view(1, {
        tag_name: 'button',
        attr_class: ['btn', 'btn-primary'],
        nth_child: 0,
        nth_of_type: 0,
      }),
      view(2, { tag_name: 'div', nth_child: 0, nth_of_type: 0 }),
      view(3, { tag_name: 'div', attr_id: 'nested', nth_child: 0, nth_of_type: 0 }),
    ]);
  });

  it('handles empty strings', () => expect(chainToElements('')).toEqual([]));

  it('handles broken class names', () => {
    expect(chainToElements('"a........small')).toEqual([
      view(0, { tag_name: 'a', attr_class: ['small'] }),
    ]);
  });

  it('handles element containing quotes and colons', () => {
    const chain = elementsToString([
      {
        tag_name: 'a',
        href: '/a-url',
        attr_class: ['small"', 'xy:z'],
        attributes: { attr_class: 'xyz small"' },
      },
    ]);
    expect(chain).toBe(
      'a.small.xy:z:attr_class="xyz small\\""href="/a-url"nth-child="0"nth-of-type="0"',
    );
    expect(chainToElements(chain)).toEqual([
      view(0, {
        tag_name: 'a',
        href: '/a-url',
        attr_class: ['small', 'xy:z'],
        nth_child: 0,
        nth_of_type: 0,
        attributes: { attr_class: 'xyz small\\"' },
      }),
    ]);
  });

  it('handles multiple classNames (no tag name → "")', () => {
    const chain = elementsToString([
      { attr_class: ['something', 'another'], attributes: { attr__class: 'something another' } },
    ]);
    expect(chain).toBe(
      '.another.something:attr__class="something another"nth-child="0"nth-of-type="0"',
    );
    expect(chainToElements(chain)).toEqual([
      view(0, {
        tag_name: '',
        attr_class: ['another', 'something'],
        nth_child: 0,
        nth_of_type: 0,
        attributes: { attr__class: 'something another' },
      }),
    ]);
  });

  it('handles empty attributes', () => {
    const chain = elementsToString([{ tag_name: 'div', attributes: { empty: '' } }]);
    expect(chain).toBe('div:empty=""nth-child="0"nth-of-type="0"');
    expect(chainToElements(chain)[0]?.attributes).toEqual({ empty: '' });
  });

  it('extractElements parses simple elements and attr__class arrays', () => {
    expect(
      extractElements([
        { tag_name: 'a', nth_child: 1, nth_of_type: 2, attr__class: 'btn btn-sm' },
        { tag_name: 'div', nth_child: 1, nth_of_type: 2, $el_text: '💻' },
      ]),
    ).toEqual([
      {
        tag_name: 'a',
        attr_class: ['btn', 'btn-sm'],
        nth_child: 1,
        nth_of_type: 2,
        attributes: { attr__class: 'btn btn-sm' },
      },
      { text: '💻', tag_name: 'div', nth_child: 1, nth_of_type: 2, attributes: {} },
    ]);
    expect(extractElements([{ attr__class: ['btn', 'btn-sm'] }])[0]).toMatchObject({
      attr_class: ['btn', 'btn-sm'],
      attributes: { attr__class: ['btn', 'btn-sm'] },
    });
  });
});

describe('elementsToChain ($elements from posthog-js)', () => {
  it('renders the capture.md §4.2 example', () => {
    expect(
      elementsToChain([
        { tag_name: 'a', nth_child: 1, nth_of_type: 2, attr__class: 'btn btn-sm' },
        { tag_name: 'div', nth_child: 1, nth_of_type: 2, $el_text: '💻' },
      ]),
    ).toBe(
      'a.btn.btn-sm:attr__class="btn btn-sm"nth-child="1"nth-of-type="2";div:nth-child="1"nth-of-type="2"text="💻"',
    );
  });

  it('reproduces a real chain from PostHog tests byte for byte', () => {
    const elements = [
      {
        tag_name: 'a',
        $el_text: 'Actions',
        attr__class: 'nav-link',
        attr__href: '/actions',
        nth_child: 1,
        nth_of_type: 1,
      },
      { tag_name: 'li', nth_child: 2, nth_of_type: 2 },
      { tag_name: 'ul', attr__class: 'nav flex-sm-column', nth_child: 1, nth_of_type: 1 },
      {
        tag_name: 'div',
        attr__class: 'col-sm-3 col-md-2 sidebar flex-shrink-1 bg-light pt-3',
        attr__style: 'min-height: 100vh;',
        nth_child: 1,
        nth_of_type: 1,
      },
      {
        tag_name: 'div',
        attr__class: 'row flex-fill flex-column flex-sm-row',
        nth_child: 1,
        nth_of_type: 1,
      },
      {
        tag_name: 'div',
        attr__class: 'container-fluid flex-grow-1 d-flex',
        nth_child: 1,
        nth_of_type: 1,
      },
      { tag_name: 'div', attr__id: 'root', nth_child: 1, nth_of_type: 1 },
      { tag_name: 'body', nth_child: 2, nth_of_type: 1 },
    ];
    expect(elementsToChain(elements)).toBe(
      'a.nav-link:attr__class="nav-link"attr__href="/actions"href="/actions"nth-child="1"nth-of-type="1"text="Actions";li:nth-child="2"nth-of-type="2";ul.flex-sm-column.nav:attr__class="nav flex-sm-column"nth-child="1"nth-of-type="1";div.bg-light.col-md-2.col-sm-3.flex-shrink-1.pt-3.sidebar:attr__class="col-sm-3 col-md-2 sidebar flex-shrink-1 bg-light pt-3"attr__style="min-height: 100vh;"nth-child="1"nth-of-type="1";div.flex-column.flex-fill.flex-sm-row.row:attr__class="row flex-fill flex-column flex-sm-row"nth-child="1"nth-of-type="1";div.container-fluid.d-flex.flex-grow-1:attr__class="container-fluid flex-grow-1 d-flex"nth-child="1"nth-of-type="1";div:attr__id="root"attr_id="root"nth-child="1"nth-of-type="1";body:nth-child="2"nth-of-type="1"',
    );
  });

  it('round-trips through chainToElements', () => {
    const chain = elementsToChain([
      {
        tag_name: 'button',
        $el_text: 'Say "hi"; now',
        attr__class: 'b a',
        attr__id: 'go',
        attr__href: '/x?a=1',
        nth_child: 3,
        nth_of_type: 1,
      },
      { tag_name: 'form', attr__action: '/signup', nth_child: 1, nth_of_type: 1 },
    ]);
    expect(chainToElements(chain)).toEqual([
      view(0, {
        tag_name: 'button',
        attr_class: ['a', 'b'],
        text: 'Say \\"hi\\"; now',
        href: '/x?a=1',
        attr_id: 'go',
        nth_child: 3,
        nth_of_type: 1,
        attributes: { attr__class: 'b a', attr__href: '/x?a=1', attr__id: 'go' },
      }),
      view(1, {
        tag_name: 'form',
        nth_child: 1,
        nth_of_type: 1,
        attributes: { attr__action: '/signup' },
      }),
    ]);
  });

  it('defaults nth-child / nth-of-type to 0 and truncates text (400) and href (2048)', () => {
    const chain = elementsToChain([
      { tag_name: 'p', $el_text: 'x'.repeat(500), attr__href: 'h'.repeat(3000) },
    ]);
    const [element] = chainToElements(chain);
    expect(element?.text).toHaveLength(400);
    expect(element?.href).toHaveLength(2048);
    expect(element?.attributes.attr__href).toHaveLength(3000); // the raw attribute is kept whole, as in PostHog
    expect(element).toMatchObject({ nth_child: 0, nth_of_type: 0 });
  });

  it('sorts attribute keys with localeCompare like PostHog (not by code point)', () => {
    expect(
      elementsToChain([
        { tag_name: 'i', 'attr__data-x': '1', attr__data_x: '2', attr__B: '3', attr__a: '4' },
      ]),
    ).toBe('i:attr__a="4"attr__B="3"attr__data_x="2"attr__data-x="1"nth-child="0"nth-of-type="0"');
  });

  it('escapes quotes in keys and values and drops them from class names', () => {
    expect(elementsToChain([{ tag_name: 'a', attr__class: 'x"y', 'attr__da"ta': 'v"w' }])).toBe(
      'a.xy:attr__class="x\\"y"attr__da\\"ta="v\\"w"nth-child="0"nth-of-type="0"',
    );
  });

  it('gives an empty chain for anything but a non-empty array', () => {
    for (const input of [undefined, null, 'a:nth-child="1"', {}, []])
      expect(elementsToChain(input)).toBe('');
  });
});

describe('chainToElements', () => {
  it('does not split on ; or whitespace inside quotes, but does outside', () => {
    const elements = chainToElements(
      'a:text="one; two"nth-child="1" b:nth-child="2";c:nth-child="x"',
    );
    expect(elements.map((e) => [e.tag_name, e.text, e.nth_child])).toEqual([
      ['a', 'one; two', 1],
      ['b', null, 2],
      ['c', null, null], // non-integer nth-child → null
    ]);
  });

  it('keeps `:` inside class names apart from the attributes', () => {
    expect(chainToElements('div.md:flex.hover:bg-red:nth-child="1"')).toEqual([
      view(0, { tag_name: 'div', attr_class: ['md:flex', 'hover:bg-red'], nth_child: 1 }),
    ]);
  });

  it('reads a chain with no attributes part', () => {
    expect(chainToElements('span.a.b;div')).toEqual([
      view(0, { tag_name: 'span', attr_class: ['a', 'b'] }),
      view(1, { tag_name: 'div' }),
    ]);
  });
});

describe('elementsChainOf', () => {
  it('prefers a non-empty $elements_chain', () => {
    const input = { $elements_chain: 'a:nth-child="1"', $elements: [{ tag_name: 'b' }], x: 1 };
    expect(elementsChainOf(input)).toBe('a:nth-child="1"');
  });

  it('converts $elements otherwise, and gives "" when there is neither', () => {
    expect(
      elementsChainOf({ $elements_chain: '', $elements: [{ tag_name: 'b', nth_child: 1 }] }),
    ).toBe('b:nth-child="1"nth-of-type="0"');
    expect(elementsChainOf({ y: 2 })).toBe('');
  });
});
