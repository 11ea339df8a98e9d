// First, before anything loads React: react-dom reports its commits to the hook this installs (reactCommits.ts).
import './reactCommits'
import '@testing-library/jest-dom/vitest'
import { configure } from '@testing-library/react'

// findBy*/waitFor wait up to 5 s (Testing Library's default is 1 s): `npm test` runs several files at a time beside
// the static checks, and a loaded machine must not turn a render that comes later into a failure. A test that
// claims a latency measures it itself.
configure({ asyncUtilTimeout: 5000 })
