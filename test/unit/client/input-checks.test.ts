/** Checks the client makes before anything starts: an unsaid counterfactual, a parent snapshot's refused media. */
import { InvalidForkInputError } from '../../../src/client';
import { refuseParentMedia, refuseUnsaidCounterfactual } from '../../../src/client/input-checks';
import { imageBlock, png } from '../../kit/media';

test('a fork that changes the model, system or tools without counterfactual: true is refused, naming it', () => {
  expect(() => refuseUnsaidCounterfactual({ model: 'claude-opus-4-6' }, 'claude-sonnet-5-5')).toThrow(InvalidForkInputError);
  expect(() => refuseUnsaidCounterfactual({ model: 'claude-opus-4-6' }, 'claude-sonnet-5-5')).toThrow(/model \(claude-sonnet-5-5 → claude-opus-4-6\).*`counterfactual: true`/);
  expect(() => refuseUnsaidCounterfactual({ system: 'x', tools: [] }, 'm')).toThrow(/system, tools:/);
  expect(() => refuseUnsaidCounterfactual({ model: 'm' }, 'm')).not.toThrow();
  expect(() => refuseUnsaidCounterfactual({ model: 'other', counterfactual: true }, 'm')).not.toThrow();
});

test("a parent snapshot's image the API would refuse is refused by its path", () => {
  const ok = [{ role: 'user' as const, content: [imageBlock(png(100, 100))] }];
  expect(() => refuseParentMedia(ok)).not.toThrow();
  const wide = [{ role: 'user' as const, content: [{ type: 'text' as const, text: 'see' }] }, { role: 'assistant' as const, content: 'ok' }, { role: 'user' as const, content: [{ type: 'text' as const, text: 'and' }, imageBlock(png(9000, 2))] }];
  expect(() => refuseParentMedia(wide as never)).toThrow(/parent\.messages\.2\.content\.1: image is 9000×2 px, over the API's 8000 px a side/);
});
