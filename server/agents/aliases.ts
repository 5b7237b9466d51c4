/** Adjective-animal aliases (`slim-wildebeest`): easy to say, to type and to tell apart. */
const ADJECTIVES = (
  "able bold brave brisk calm clever cosmic crisp curious daring deft eager early fair fancy fast fierce " +
  "gentle glad golden grand happy hardy honest humble jolly keen kind lively lucky merry mighty modest " +
  "neat nimble noble patient plucky polite proud quick quiet rapid ready rustic sharp shiny silent slim " +
  "smart snappy solid steady sturdy sunny swift tidy tough trusty vivid warm wise witty zesty"
).split(" ");
const ANIMALS = (
  "albatross alpaca badger beaver bison bobcat buffalo camel caribou cheetah condor cougar coyote crane " +
  "dolphin eagle elk falcon ferret finch fox gazelle gecko gibbon giraffe heron hippo ibex jackal jaguar " +
  "koala lemur leopard llama lynx magpie marmot meerkat mongoose moose narwhal ocelot otter owl panda " +
  "panther pelican penguin puffin quail raven salmon seal sparrow tapir tiger toucan walrus weasel wildebeest wolf yak zebra"
).split(" ");

export function generateAlias(isTaken: (alias: string) => boolean, random: () => number = Math.random): string {
  const pick = (list: string[]) => list[Math.floor(random() * list.length)]!;
  let base = "";
  for (let i = 0; i < 20; i++) {
    base = `${pick(ADJECTIVES)}-${pick(ANIMALS)}`;
    if (!isTaken(base)) return base;
  }
  for (let n = 2; ; n++) if (!isTaken(`${base}-${n}`)) return `${base}-${n}`;
}
