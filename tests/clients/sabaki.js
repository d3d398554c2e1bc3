// Sabaki's own GTP controller (@sabaki/gtp) drives `tengen gtp -model M -config CFG` the
// way Sabaki does (src/modules/enginesyncer.js and sabaki.js): start-up queries, the
// analysis command chosen from list_commands by the `engines.analyze_commands` setting,
// the streamed `info` lines, and the stop Sabaki sends (any command while busy).
// Usage: node sabaki.js TENGEN MODEL CFG
const assert = require('assert/strict')
const {dirname} = require('path')
const {Controller, ControllerStateTracker} = require('@sabaki/gtp')

// Sabaki's defaults for `engines.analyze_commands` and `board.analysis_interval`.
const ANALYZE_COMMANDS = ['analyze', 'kata-analyze', 'lz-analyze']
const ANALYSIS_INTERVAL = 50

async function main([bin, model, cfg]) {
  const controller = new Controller(bin, ['gtp', '-model', model, '-config', cfg], {
    cwd: dirname(bin),
  })
  controller.on('stderr', ({content}) => process.stderr.write(`tengen: ${content}\n`))
  const tracker = new ControllerStateTracker(controller)
  controller.start()

  const [name, , protocol, list] = await Promise.all(
    ['name', 'version', 'protocol_version', 'list_commands'].map((name) =>
      controller.sendCommand({name}),
    ),
  )
  assert.equal(protocol.content, '2')
  const commands = list.content.split('\n')
  const chosen = ANALYZE_COMMANDS.find((x) => commands.includes(x))
  console.log(`name ${name.content}; Sabaki picks ${chosen} from ${commands.length} commands`)
  assert.equal(chosen, 'kata-analyze', 'Sabaki must pick kata-analyze, for score lead')

  const history = ['Q16', 'D4', 'Q3', 'D16'].map((vertex, i) => ({
    name: 'play',
    args: [i % 2 ? 'W' : 'B', vertex],
  }))
  await tracker.sync({komi: 7.5, boardsize: [19, 19], history})

  // Sabaki subscribes to an analysis command's lines when it is sent.
  const infos = []
  let enough
  const gotEnough = new Promise((resolve) => (enough = resolve))
  controller.on('command-sent', ({command, subscribe}) => {
    if (command.name !== chosen) return
    subscribe(({line}) => {
      if (!line.startsWith('info ')) return
      infos.push(line)
      if (infos.length >= 3) enough()
    })
  })
  const analysis = tracker.queueCommand({name: chosen, args: ['B', `${ANALYSIS_INTERVAL}`]})
  const timeout = setTimeout(() => enough(), 60_000)
  await gotEnough
  clearTimeout(timeout)
  assert.ok(infos.length >= 3, `only ${infos.length} info lines in 60 s`)

  // Each `info` block names a move with a score lead, as Sabaki's parser reads it.
  const blocks = infos.at(-1).split(/\s*info\s+/).slice(1)
  assert.ok(blocks.length > 0)
  for (const block of blocks) {
    const fields = block.split(/\s+/)
    const lead = fields[fields.indexOf('scoreLead') + 1]
    assert.ok(fields.includes('scoreLead') && Number.isFinite(+lead), `no scoreLead in: ${block}`)
  }
  console.log(`${infos.length} info lines; last: ${infos.at(-1).slice(0, 120)}...`)

  // Sabaki's stop (EngineSyncer.sendAbort): protocol_version while the controller is busy.
  assert.ok(controller.busy)
  const abort = controller.sendCommand({name: 'protocol_version'})
  const ended = await analysis
  assert.equal(ended.error, false, `the analysis ended in an error: ${ended.content}`)
  assert.equal((await abort).content, '2')
  assert.ok(!controller.busy)

  // The engine goes on after the stop.
  const move = await controller.sendCommand({name: 'genmove', args: ['B']})
  assert.equal(move.error, false)
  assert.match(move.content, /^([A-T]\d+|pass|resign)$/i)
  await controller.stop()
  console.log('sabaki: passed')
}

main(process.argv.slice(2)).catch((err) => {
  console.error(err)
  process.exit(1)
})
