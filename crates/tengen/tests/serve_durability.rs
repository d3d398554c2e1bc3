//! Fault injection: `tengen serve` with its state directory on a small tmpfs, a real
//! mosquitto for commands and alerts, and a socat pty for the serial controller. Each
//! scenario injects one fault (a bad `new_game`, a full disk at append, reset or archive,
//! an unwritable `games/`, a corrupt journal line, `clear_board` mid-game), goes on with
//! moves, kills the daemon with SIGKILL and restarts it: the game after the restart must
//! be exactly the one acknowledged before the kill, and every finished game must be on
//! disk as SGF.
//!
//! Mounting a tmpfs needs root (CI runs as root); without it, or without mosquitto or
//! socat, the test says it skipped.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::Value;
use support::mqtt::{free_port, have, Broker, Observer, PREFIX};
use support::serial::{have_socat, random_game, Daemon, Port, Socat};

const REPLY: Duration = Duration::from_secs(20);

/// A small tmpfs, unmounted when dropped.
struct Tmpfs {
    path: PathBuf,
}

impl Tmpfs {
    fn mount(path: &Path) -> Option<Tmpfs> {
        std::fs::create_dir_all(path).unwrap();
        let ok = Command::new("mount")
            .args(["-t", "tmpfs", "-o", "size=1m,mode=0755", "tengen-test"])
            .arg(path)
            .status()
            .is_ok_and(|s| s.success());
        ok.then(|| Tmpfs {
            path: path.to_path_buf(),
        })
    }

    /// Fills the file system up to its last block.
    fn fill(&self) {
        use std::io::Write;
        let mut f = std::fs::File::create(self.path.join("filler")).unwrap();
        let block = [0u8; 4096];
        while f.write_all(&block).is_ok() {}
        let _ = f.sync_all();
    }

    fn unfill(&self) {
        let _ = std::fs::remove_file(self.path.join("filler"));
    }
}

impl Drop for Tmpfs {
    fn drop(&mut self) {
        let _ = Command::new("umount").arg("-l").arg(&self.path).status();
    }
}

/// The game as the daemon has it: size, komi and moves.
#[derive(Clone, Debug, PartialEq)]
struct Played {
    size: (usize, usize),
    komi: f32,
    moves: Vec<String>,
}

impl Played {
    fn new(size: usize, komi: f32) -> Played {
        Played {
            size: (size, size),
            komi,
            moves: Vec::new(),
        }
    }
}

/// Everything one scenario runs against.
struct Rig {
    dir: PathBuf,
    fs: Tmpfs,
    state: PathBuf,
    config: PathBuf,
    obs: Observer,
    session: Option<(Socat, Daemon, Port)>,
    /// Changes acknowledged over the whole test.
    acked: usize,
}

impl Rig {
    fn new(dir: &Path, fs: Tmpfs, mqtt_port: u16) -> Rig {
        let state = fs.path.join("state");
        let config = dir.join("tengen.toml");
        let text = format!(
            "[mqtt]\nhost = \"127.0.0.1\"\nport = {mqtt_port}\ndevice_id = \"test\"\n\
             keep_alive = 5\n\n[serial]\nport = \"{}\"\n\n\
             [game]\nsize = 19\nkomi = 7.5\nengine = \"none\"\n\n[state]\ndir = \"{}\"\n",
            dir.join("board").display(),
            state.display()
        );
        std::fs::write(&config, support::config::without_network(&text)).unwrap();
        let obs = Observer::connect(mqtt_port, "durability");
        Rig {
            dir: dir.to_path_buf(),
            fs,
            state,
            config,
            obs,
            session: None,
            acked: 0,
        }
    }

    /// A fresh state directory for the next scenario.
    fn clean(&mut self) {
        self.kill();
        self.fs.unfill();
        let _ = std::fs::remove_dir_all(&self.state);
    }

    fn start(&mut self) {
        let socat = Socat::start(&self.dir);
        let from = self.obs.count();
        let daemon = Daemon::start(&self.dir, &self.config, &[], false);
        // Subscribed once its status is out: commands published from now on reach it.
        let pid = daemon.child.id();
        self.obs.wait(from, "status", |s| s["pid"] == pid);
        let mut port = Port::open(&self.dir.join("ctl"));
        match port.ask("name", REPLY) {
            Some(r) if r == "= Tengen" => {}
            other => panic!("the daemon does not answer `name`: {other:?}"),
        }
        self.session = Some((socat, daemon, port));
    }

    fn kill(&mut self) {
        if let Some((mut socat, mut daemon, port)) = self.session.take() {
            daemon.kill();
            socat.stop();
            drop(port);
        }
    }

    fn port(&mut self) -> &mut Port {
        &mut self.session.as_mut().expect("a running daemon").2
    }

    /// Sends a GTP command; true if it was acknowledged.
    fn ask(&mut self, command: &str) -> Result<String, String> {
        let reply = self
            .port()
            .ask(command, REPLY)
            .unwrap_or_else(|| panic!("no reply to {command:?}"));
        match reply.strip_prefix('=') {
            Some(text) => Ok(text.trim().to_string()),
            None => Err(reply),
        }
    }

    /// Plays `moves`, each of which must be acknowledged.
    fn play(&mut self, expected: &mut Played, moves: &[String]) {
        for m in moves {
            if let Err(e) = self.ask(&format!("play {m}")) {
                panic!("play {m} refused: {e}");
            }
            expected.moves.push(m.clone());
            self.acked += 1;
        }
    }

    /// The daemon's game.
    fn played(&mut self) -> Played {
        let sgf = self.ask("printsgf").expect("printsgf fails");
        let record = tengen_rules::sgf::load(&sgf).expect("printsgf is not SGF");
        let size = record.game.board().size();
        Played {
            size: (size.width(), size.height()),
            komi: record.game.rules().komi,
            moves: record
                .game
                .turns()
                .iter()
                .map(|t| format!("{} {}", t.player.letter(), size.gtp(t.mv)))
                .collect(),
        }
    }

    /// Kills the daemon, restarts it and checks it has exactly `expected`.
    fn kill_restart_check(&mut self, scenario: &str, expected: &Played) {
        assert_eq!(&self.played(), expected, "{scenario}: before the kill");
        self.kill();
        self.fs.unfill();
        self.start();
        assert_eq!(&self.played(), expected, "{scenario}: after the restart");
    }

    /// Publishes a command and waits for an alert whose message or kind says `what`.
    fn command_alert(&mut self, payload: &str, what: &str) -> Value {
        let from = self.obs.count();
        self.obs.publish("command", payload);
        let (_, alert) = self
            .obs
            .wait(from, "alert", |a| a.to_string().contains(what));
        alert
    }

    /// SGF files under `folder` holding exactly `moves`.
    fn archived_with(&self, folder: &Path, moves: &[String]) -> usize {
        let Ok(entries) = std::fs::read_dir(folder) else {
            return 0;
        };
        entries
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .filter(|p| p.extension().is_some_and(|x| x == "sgf"))
            .filter(|p| {
                let text = std::fs::read_to_string(p).unwrap();
                let game = tengen_rules::sgf::load(&text).unwrap().game;
                let size = game.board().size();
                let got: Vec<String> = game
                    .turns()
                    .iter()
                    .map(|t| format!("{} {}", t.player.letter(), size.gtp(t.mv)))
                    .collect();
                got == moves
            })
            .count()
    }
}

impl Drop for Rig {
    fn drop(&mut self) {
        self.kill();
    }
}

fn moves(seed: u64, n: usize) -> Vec<String> {
    random_game(seed, n)
}

#[test]
fn faults_lose_nothing_acknowledged() {
    if !have_socat() || !have("mosquitto") {
        println!("skipped: socat or mosquitto not installed");
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let Some(fs) = Tmpfs::mount(&tmp.path().join("fs")) else {
        println!("skipped: cannot mount a tmpfs (not root?)");
        return;
    };
    let broker_dir = tmp.path().join("broker");
    std::fs::create_dir_all(&broker_dir).unwrap();
    let mqtt_port = free_port();
    let _broker = Broker::start(&broker_dir, mqtt_port);
    let mut rig = Rig::new(tmp.path(), fs, mqtt_port);
    assert_eq!(PREFIX, "tengen/test");
    let mut scenarios = 0;

    // 1. new_game commands the engine would refuse change nothing.
    rig.clean();
    rig.start();
    let game = moves(1, 40);
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &game[..3]);
    for (payload, what) in [
        (r#"{"cmd":"new_game","size":13,"komi":0.3}"#, "komi"),
        (r#"{"cmd":"new_game","size":9,"rules":"chinse"}"#, "rules"),
        (r#"{"cmd":"new_game","size":7,"handicap":9}"#, "handicap"),
    ] {
        let alert = rig.command_alert(payload, what);
        assert_eq!(alert["kind"], "error", "{alert}");
        assert_eq!(rig.played(), want, "after {payload}");
    }
    rig.play(&mut want, &game[3..8]);
    rig.kill_restart_check("bad new_game", &want);
    scenarios += 1;

    // 2. The disk fills up while moves are played: what could not be recorded is
    //    refused, never acknowledged.
    rig.clean();
    rig.start();
    let game = moves(2, 600);
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &game[..5]);
    rig.fs.fill();
    let mut refused = None;
    for m in &game[5..] {
        match rig.ask(&format!("play {m}")) {
            Ok(_) => {
                want.moves.push(m.clone());
                rig.acked += 1;
            }
            Err(e) => {
                refused = Some(e);
                break;
            }
        }
    }
    let refused = refused.expect("a full disk refused no move");
    assert!(refused.contains("could not record"), "{refused}");
    let next = &game[want.moves.len()];
    assert!(rig.ask(&format!("play {next}")).is_err(), "still full");
    rig.kill_restart_check("ENOSPC at append", &want);
    let next = game[want.moves.len()..want.moves.len() + 3].to_vec();
    rig.play(&mut want, &next);
    rig.kill_restart_check("ENOSPC at append, then moves", &want);
    scenarios += 1;

    // 3. A new game that cannot be recorded is not started.
    rig.clean();
    rig.start();
    let mut want = Played::new(19, 7.5);
    rig.ask("komi 6.5").unwrap();
    want.komi = 6.5;
    rig.acked += 1;
    rig.fs.fill();
    rig.command_alert(
        r#"{"cmd":"new_game","size":9,"komi":5.5}"#,
        "could not record the new game",
    );
    assert_eq!(rig.played(), want);
    rig.fs.unfill();
    rig.play(&mut want, &moves(3, 2));
    rig.kill_restart_check("ENOSPC at reset", &want);
    scenarios += 1;

    // 4. A finished game that cannot be archived stays in the journal, and is archived
    //    once the disk has room.
    rig.clean();
    rig.start();
    let game = moves(4, 10);
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &game);
    rig.fs.fill();
    rig.command_alert(r#"{"cmd":"resign"}"#, "could not");
    rig.kill();
    rig.fs.unfill();
    rig.start();
    if rig.archived_with(&rig.state.join("games"), &game) == 0 {
        // The resignation itself could not be recorded: the game goes on, whole.
        assert_eq!(rig.played(), want);
        let from = rig.obs.count();
        rig.obs.publish("command", r#"{"cmd":"resign"}"#);
        rig.obs.wait(from, "state", |s| !s["result"].is_null());
    }
    assert_eq!(
        rig.archived_with(&rig.state.join("games"), &game),
        1,
        "the finished game is archived once"
    );
    rig.ask("clear_board").unwrap();
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &moves(5, 2));
    rig.kill_restart_check("ENOSPC at archive", &want);
    scenarios += 1;

    // 5. games/ cannot be written: the finished game goes beside the journal.
    rig.clean();
    std::fs::create_dir_all(&rig.state).unwrap();
    std::fs::write(rig.state.join("games"), "not a directory").unwrap();
    rig.start();
    let game = moves(6, 6);
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &game);
    rig.command_alert(r#"{"cmd":"resign"}"#, "saved as");
    assert_eq!(rig.archived_with(&rig.state, &game), 1);
    rig.ask("clear_board").unwrap();
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &moves(7, 2));
    rig.kill_restart_check("unwritable games/", &want);
    assert_eq!(rig.archived_with(&rig.state, &game), 1);
    scenarios += 1;

    // 6. A corrupt line in the middle of the journal: kept aside, the valid prefix
    //    resumes, and the daemon comes up.
    rig.clean();
    rig.start();
    let game = moves(8, 20);
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &game[..8]);
    rig.kill();
    let journal = rig.state.join("journal.jsonl");
    let text = std::fs::read_to_string(&journal).unwrap();
    let mut lines: Vec<&str> = text.lines().collect();
    let first_move = lines.iter().position(|l| l.contains("play ")).unwrap();
    lines[first_move + 3] = "{\"seq\":garbage";
    std::fs::write(&journal, lines.join("\n") + "\n").unwrap();
    let from = rig.obs.count();
    rig.start();
    rig.obs
        .wait(from, "alert", |a| a.to_string().contains("kept aside"));
    want.moves.truncate(3);
    assert_eq!(rig.played(), want);
    assert!(rig.state.join("journal.jsonl.corrupt").is_file());
    rig.play(&mut want, &game[3..6]);
    rig.kill_restart_check("corrupt middle line", &want);
    scenarios += 1;

    // 7. clear_board mid-game archives the game and starts the journal afresh; undo
    //    and replay do not make it grow.
    rig.clean();
    rig.start();
    let game = moves(9, 7);
    let mut want = Played::new(19, 7.5);
    rig.play(&mut want, &game);
    rig.ask("clear_board").unwrap();
    rig.acked += 1;
    assert_eq!(rig.archived_with(&rig.state.join("games"), &game), 1);
    let mut want = Played::new(19, 7.5);
    let next = moves(10, 3);
    rig.play(&mut want, &next);
    let spare = moves(11, 50)
        .into_iter()
        .find(|m| !next.iter().any(|n| n[2..] == m[2..]))
        .unwrap();
    for _ in 0..300 {
        rig.ask(&format!("play {spare}")).unwrap();
        rig.ask("undo").unwrap();
        rig.acked += 2;
    }
    let lines = std::fs::read_to_string(rig.state.join("journal.jsonl"))
        .unwrap()
        .lines()
        .count();
    assert!(lines < 150, "the journal has {lines} lines for 3 moves");
    rig.kill_restart_check("clear_board mid-game", &want);
    scenarios += 1;

    println!(
        "faults: {scenarios} scenarios, {} acknowledged changes, 0 lost",
        rig.acked
    );
}
