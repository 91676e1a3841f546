// make lint: the package's rules (node/eslint.config.mjs) on the benchmark.
export { default } from '../../node/eslint.config.mjs'
