//! `tengen gtp` over pipes, as a controller drives it: a game with ids, clocks, undo,
//! handicap and an SGF round trip, and malformed input that gets `?` replies while the
//! engine keeps serving. With `--model none` (the classical engine) so it runs fast;
//! sessions with the real network when ../shared is present, and with the bundled one.

mod support;

use std::io::Write;
use std::process::{Command, Stdio};
use support::shared::shared_model;

/// A 9x9 game, komi 7, where Black walls off A-E and White F-J.
fn walled_game() -> String {
    let mut script = String::from("boardsize 9\nkomi 7\n");
    for row in 1..=9 {
        script.push_str(&format!("play b E{row}\nplay w F{row}\n"));
    }
    script
}

/// `--model none` unless `args` name a model: these sessions test the protocol, and the
/// classical engine (no network) answers in a fraction of the bundled network's time.
fn no_network_unless_named(args: &[&str]) -> &'static [&'static str] {
    if args.contains(&"--model") {
        &[]
    } else {
        &["--model", "none"]
    }
}

/// Sends `input` to `tengen gtp ARGS` and returns the replies (each without its blank line).
fn session(args: &[&str], input: &[u8]) -> Vec<String> {
    let text = timed_session(args, &[input], std::time::Duration::ZERO);
    assert!(text.ends_with("\n\n"), "{text:?}");
    text.trim_end_matches('\n')
        .split("\n\n")
        .map(str::to_string)
        .collect()
}

#[test]
fn a_game_with_ids_clocks_undo_and_scoring() {
    let dir = tempfile::tempdir().unwrap();
    let sgf = dir.path().join("game.sgf");
    let script = "protocol_version\n\
         1 name\n\
         2 boardsize 9\n\
         3 clear_board\n\
         4 komi 6.5\n\
         5 play b E5\n\
         6 genmove w\n\
         7 undo\n\
         8 undo\n\
         9 undo\n\
         10 time_settings 60 5 1\n\
         11 time_left b 30 0\n\
         12 genmove b\n\
         13 genmove w\n\
         14 showboard\n\
         15 final_score\n\
         16 known_command genmove\n\
         17 known_command frobnicate\n\
         18 kata-get-rules\n\
         19 kata-set-rules japanese\n\
         20 kata-get-rules\n\
         21 printsgf\n\
         quit\n";
    let r = session(&["--visits", "30"], script.as_bytes());
    assert_eq!(r[0], "= 2");
    assert_eq!(r[1], "=1 Tengen");
    for (i, reply) in r.iter().enumerate().take(6).skip(2) {
        assert_eq!(reply, &format!("={}", i));
    }
    let w_move = r[6].strip_prefix("=6 ").expect("a move");
    assert!(w_move != "E5" && !w_move.is_empty());
    assert_eq!(r[7], "=7");
    assert_eq!(r[8], "=8");
    assert_eq!(r[9], "?9 cannot undo");
    assert_eq!(r[10], "=10");
    assert_eq!(r[11], "=11");
    assert!(r[12].starts_with("=12 "), "{}", r[12]);
    assert!(r[13].starts_with("=13 "), "{}", r[13]);
    let board = &r[14];
    assert!(
        board.starts_with("=14\n") && board.contains("Next player: Black"),
        "{board}"
    );
    assert!(board.contains(" A B C D E F G H J"));
    let score = r[15].strip_prefix("=15 ").unwrap();
    assert!(
        score.starts_with("B+") || score.starts_with("W+") || score == "0",
        "{score}"
    );
    assert_eq!(r[16], "=16 true");
    assert_eq!(r[17], "=17 false");
    assert!(r[18].contains("\"scoring\":\"AREA\""), "{}", r[18]);
    assert_eq!(r[19], "=19");
    assert!(r[20].contains("\"scoring\":\"TERRITORY\""), "{}", r[20]);
    let record = r[21].strip_prefix("=21 ").unwrap();
    assert!(
        record.starts_with("(;") && record.contains("KM[6.5]"),
        "{record}"
    );

    // The record loads back: same moves, same next player.
    std::fs::write(&sgf, record).unwrap();
    let script = format!("loadsgf {}\nshowboard\nprintsgf\nquit\n", sgf.display());
    let r2 = session(&["--visits", "10"], script.as_bytes());
    assert_eq!(r2[0], "=");
    assert_eq!(
        r2[1].lines().skip(1).collect::<Vec<_>>(),
        board.lines().skip(1).collect::<Vec<_>>()
    );
    assert_eq!(r2[2].strip_prefix("= ").unwrap(), record);
}

#[test]
fn handicap_then_white_moves_first() {
    let r = session(
        &["--visits", "20"],
        b"boardsize 19\nfixed_handicap 4\ngenmove w\nset_free_handicap D4 Q16\nclear_board\nset_free_handicap D4 Q16\nplay b D5\nquit\n",
    );
    let stones: Vec<&str> = r[1].strip_prefix("= ").unwrap().split(' ').collect();
    assert_eq!(stones.len(), 4);
    assert!(stones.contains(&"D4") && stones.contains(&"Q16"));
    assert!(r[2].starts_with("= "), "{}", r[2]);
    assert_eq!(r[3], "? board not empty");
    assert_eq!(r[5], "=");
    assert_eq!(r[6], "=");
}

#[test]
fn malformed_input_gets_errors_and_the_engine_keeps_serving() {
    let mut input = Vec::new();
    input.extend_from_slice(b"1 play b Z99\n");
    input.extend_from_slice(b"2 play x D4\n");
    input.extend_from_slice(b"3 boardsize 100\n");
    input.extend_from_slice(b"4 boardsize 0\n");
    input.extend_from_slice(b"5 frobnicate\n");
    input.extend_from_slice(b"6 komi lots\n");
    input.extend_from_slice(b"7 play b D4\n8 play w D4\n");
    input.extend_from_slice(b"9 play b \xff\xfe\n");
    input.extend_from_slice(&vec![b'x'; 2 << 20]);
    input.extend_from_slice(b"\n");
    input.extend_from_slice(b"10 time_left b -5 -1\n");
    input.extend_from_slice(b"11 time_settings 1e400 0 0\n");
    input.extend_from_slice(b"12\n");
    input.extend_from_slice(b"# comment only\n\n   \n");
    input.extend_from_slice(b"13 name\n");
    input.extend_from_slice(b"quit\n");
    let r = session(&[], &input);
    assert_eq!(r[0], "?1 invalid vertex");
    assert_eq!(r[1], "?2 invalid color");
    assert_eq!(r[2], "?3 unacceptable size");
    assert_eq!(r[3], "?4 unacceptable size");
    assert_eq!(r[4], "?5 unknown command");
    assert_eq!(r[5], "?6 komi not a float");
    assert_eq!(r[6], "=7");
    assert!(r[7].starts_with("?8 illegal move"), "{}", r[7]);
    assert_eq!(r[8], "?9 invalid vertex");
    assert!(r[9].starts_with("? line too long"), "{}", r[9]);
    assert!(r[10].starts_with("?10 "), "{}", r[10]);
    assert!(r[11].starts_with("?11 "), "{}", r[11]);
    assert_eq!(r[12], "?12 missing command");
    assert_eq!(r[13], "=13 Tengen");
    assert_eq!(r[14], "=");
    assert_eq!(r.len(), 15);
}

#[test]
fn the_network_plays_the_obvious_move() {
    let Some(model) = shared_model() else {
        return;
    };
    // Black's E5 is in atari on a 9x9 board; the network saves it.
    let r = session(
        &["--model", model.to_str().unwrap(), "--visits", "100"],
        b"boardsize 9\nplay w D5\nplay w E6\nplay w F5\nplay b E5\ngenmove b\nquit\n",
    );
    assert_eq!(r[5], "= E4", "{r:?}");
    // One visit is the raw policy's move, as in KataGo (not "no move to play").
    let r = session(
        &["--model", model.to_str().unwrap(), "--visits", "1"],
        b"boardsize 9\nplay w D5\nplay w E6\nplay w F5\nplay b E5\ngenmove b\nquit\n",
    );
    assert_eq!(r[5], "= E4", "{r:?}");
}

/// Like [`session`], but waits `pause` after each chunk, so analyses have time to report.
fn timed_session<C: AsRef<[u8]>>(
    args: &[&str],
    chunks: &[C],
    pause: std::time::Duration,
) -> String {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("gtp")
        .args(no_network_unless_named(args))
        .args(args)
        .env("RUST_LOG", "error")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tengen runs");
    // Read the replies while writing: reports outgrow the pipe's buffer.
    let mut stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut s = String::new();
        std::io::Read::read_to_string(&mut stdout, &mut s).unwrap();
        s
    });
    let mut stdin = child.stdin.take().unwrap();
    for c in chunks {
        stdin.write_all(c.as_ref()).unwrap();
        stdin.flush().unwrap();
        std::thread::sleep(pause);
    }
    drop(stdin);
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    reader.join().expect("replies are UTF-8")
}

#[test]
fn analysis_streams_until_the_next_command() {
    let pause = std::time::Duration::from_millis(400);
    let out = timed_session(
        &[],
        &[
            "boardsize 9\n5 kata-analyze 5 ownership true rootInfo true\n",
            "6 name\n7 lz-analyze b 5\n",
            "8 kata-genmove_analyze b 5\n",
            "9 showboard\nquit\n",
        ],
        pause,
    );
    let replies: Vec<&str> = out.trim_end_matches('\n').split("\n\n").collect();
    assert_eq!(replies[0], "=");
    // kata-analyze: "=5", then report lines, closed by the empty line before "=6".
    let kata: Vec<&str> = replies[1].lines().collect();
    assert_eq!(kata[0], "=5");
    assert!(kata.len() >= 3, "too few reports: {kata:?}");
    for l in &kata[1..] {
        assert!(l.starts_with("info move "), "{l}");
        for key in [
            " visits ",
            " winrate ",
            " scoreLead ",
            " utilityLcb ",
            " order 0 ",
            " pv ",
        ] {
            assert!(l.contains(key), "{key} missing in {l}");
        }
        assert!(l.contains(" rootInfo visits "), "{l}");
        let own = l.split(" ownership ").nth(1).expect("ownership");
        assert_eq!(own.split(' ').count(), 81, "{own}");
    }
    assert_eq!(replies[2], "=6 Tengen");
    let lz: Vec<&str> = replies[3].lines().collect();
    assert_eq!(lz[0], "=7");
    assert!(lz.len() >= 2);
    let first = lz[1];
    assert!(
        first.starts_with("info move ") && first.contains(" winrate "),
        "{first}"
    );
    let winrate: i64 = first
        .split(" winrate ")
        .nth(1)
        .unwrap()
        .split(' ')
        .next()
        .unwrap()
        .parse()
        .unwrap();
    assert!((0..=10000).contains(&winrate));
    // genmove_analyze ends with the move it played.
    let gen: Vec<&str> = replies[4].lines().collect();
    assert_eq!(gen[0], "=8");
    let play = gen.last().unwrap();
    assert!(play.starts_with("play "), "{gen:?}");
    let board = replies[5];
    assert!(
        board.starts_with("=9") && board.contains("Next player: White"),
        "{board}"
    );
}

/// A `tengen gtp --listen` server on a free loopback port: the child and its address.
fn server(args: &[&str]) -> (std::process::Child, String) {
    use std::io::BufRead;
    let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["gtp", "--listen", "127.0.0.1:0", "--visits", "20"])
        .args(no_network_unless_named(args))
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tengen runs");
    let mut log = std::io::BufReader::new(child.stderr.take().unwrap());
    let mut addr = None;
    for _ in 0..50 {
        let mut line = String::new();
        if log.read_line(&mut line).unwrap() == 0 {
            break;
        }
        if let Some(a) = line.trim().split("GTP listening on ").nth(1) {
            addr = Some(a.to_string());
            break;
        }
    }
    let addr = addr.expect("the server says where it listens");
    // Keep draining the log so the server never blocks on it.
    std::thread::spawn(move || std::io::copy(&mut log, &mut std::io::sink()));
    (child, addr)
}

/// One client's whole conversation: sends `script`, reads until the server closes.
fn talk(addr: &str, script: &str) -> String {
    use std::io::Read;
    let mut s = std::net::TcpStream::connect(addr).unwrap();
    // Only so that a broken server fails the test instead of hanging it.
    s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    s.write_all(script.as_bytes()).unwrap();
    let mut text = String::new();
    s.read_to_string(&mut text).unwrap();
    text
}

#[test]
fn tcp_gives_each_client_a_fresh_game() {
    let (mut child, addr) = server(&[]);
    let first = talk(
        &addr,
        "1 boardsize 9\n2 komi 3.5\n3 play b E5\n4 genmove w\n5 kata-set-param cpuctExploration 2.5\nquit\n",
    );
    assert!(first.starts_with("=1\n\n=2\n\n=3\n\n=4 "), "{first}");
    assert!(first.ends_with("=\n\n"), "{first}");
    // The next client finds a new 19x19 game with the start-up komi and parameters.
    let second = talk(
        &addr,
        "1 showboard\n2 printsgf\n3 kata-get-param cpuctExploration\nquit\n",
    );
    let r: Vec<&str> = second.trim_end().split("\n\n").collect();
    assert!(
        r[0].contains("\n19 . . .") && !r[0].contains('X'),
        "{second}"
    );
    assert!(r[0].contains("Next player: Black"), "{second}");
    assert!(!r[0].contains("3.5"), "{second}");
    assert!(!r[1].contains(";B[") && !r[1].contains(";W["), "{second}");
    assert!(r[1].contains("SZ[19]"), "{second}");
    assert!(!r[2].contains("2.5"), "{second}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn tcp_clients_share_the_game_when_asked() {
    let (mut child, addr) = server(&["--listen-shared"]);
    let first = talk(&addr, "1 boardsize 9\n2 play b E5\n3 genmove w\nquit\n");
    assert!(first.starts_with("=1\n\n=2\n\n=3 "), "{first}");
    // The next client finds the same game.
    let second = talk(&addr, "showboard\nquit\n");
    assert!(second.contains(" 5 . . . . X . . . .  5"), "{second}");
    assert!(second.contains("Next player: Black"), "{second}");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn an_idle_client_is_disconnected_and_the_next_one_served() {
    use std::io::Read;
    let (mut child, addr) = server(&["--idle-timeout", "1"]);
    let mut s = std::net::TcpStream::connect(&addr).unwrap();
    s.set_read_timeout(Some(std::time::Duration::from_secs(120)))
        .unwrap();
    s.write_all(b"1 name\n").unwrap();
    // Then silence: the server closes the connection, so reading ends without an error.
    let mut text = String::new();
    s.read_to_string(&mut text)
        .expect("the server closes an idle connection");
    assert_eq!(text, "=1 Tengen\n\n");
    assert_eq!(talk(&addr, "name\nquit\n"), "= Tengen\n\n=\n\n");
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn loadsgf_over_tcp_reads_only_the_sgf_directory() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("games");
    std::fs::create_dir(&dir).unwrap();
    let game = "(;GM[1]FF[4]SZ[9]KM[7];B[ee];W[cc])";
    std::fs::write(dir.join("game.sgf"), game).unwrap();
    std::fs::write(root.path().join("private.sgf"), game).unwrap();
    std::os::unix::fs::symlink(root.path().join("private.sgf"), dir.join("escape.sgf")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", dir.join("zero.sgf")).unwrap();

    // Without --sgf-dir a remote client cannot load files at all.
    let (mut child, addr) = server(&[]);
    let r = talk(
        &addr,
        &format!("loadsgf {}\nquit\n", dir.join("game.sgf").display()),
    );
    assert!(r.starts_with("? loadsgf is not available"), "{r}");
    let _ = child.kill();
    let _ = child.wait();

    let (mut child, addr) = server(&["--sgf-dir", dir.to_str().unwrap()]);
    let private = root.path().join("private.sgf");
    let script = format!(
        "1 loadsgf game.sgf\n2 printsgf\n3 loadsgf ../private.sgf\n4 loadsgf {}\n\
         5 loadsgf escape.sgf\n6 loadsgf zero.sgf\n7 loadsgf /dev/zero\n8 loadsgf /etc/passwd\n\
         9 loadsgf missing.sgf\nquit\n",
        private.display()
    );
    let text = talk(&addr, &script);
    let r: Vec<&str> = text.trim_end().split("\n\n").collect();
    assert_eq!(r[0], "=1");
    assert!(r[1].contains(";B[ee]"), "{text}");
    for (i, reply) in r.iter().enumerate().take(8).skip(2) {
        assert!(
            reply.starts_with(&format!("?{} cannot load file: ", i + 1))
                && reply.contains("outside the SGF directory"),
            "{reply}"
        );
    }
    assert!(r[8].starts_with("?9 cannot load file: "), "{}", r[8]);
    let _ = child.kill();
    let _ = child.wait();
}

#[test]
fn loadsgf_refuses_devices_fifos_and_huge_files() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.sgf");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let huge = dir.path().join("huge.sgf");
    let f = std::fs::File::create(&huge).unwrap();
    f.set_len(1 << 30).unwrap();
    let garbage = dir.path().join("shadow");
    std::fs::write(&garbage, "root:$6$secret:19000:0:99999:7:::\n").unwrap();
    let script = format!(
        "1 loadsgf /dev/zero\n2 loadsgf {}\n3 loadsgf {}\n4 loadsgf {}\n5 name\nquit\n",
        fifo.display(),
        huge.display(),
        garbage.display()
    );
    let r = session(&[], script.as_bytes());
    assert_eq!(r[0], "?1 cannot load file: not a regular file");
    assert_eq!(r[1], "?2 cannot load file: not a regular file");
    assert!(
        r[2].starts_with("?3 cannot load file: larger than"),
        "{}",
        r[2]
    );
    assert!(r[3].starts_with("?4 cannot load file: "), "{}", r[3]);
    assert!(
        !r[3].contains("secret") && !r[3].contains("'r'"),
        "{}",
        r[3]
    );
    assert_eq!(r[4], "=5 Tengen");
}

#[test]
fn dead_stones_are_found_and_removed_for_the_score() {
    let Some(model) = shared_model() else {
        return;
    };
    // Black walls off A-E, White F-J; a lone White stone at B5 inside Black's area.
    // Area: Black 45, White 36 + komi 7 = 43, so B+2 once B5 is removed.
    let mut script = walled_game();
    script.push_str(
        "play w B5\nplay b pass\nplay w pass\nfinal_status_list dead\nfinal_status_list alive\nfinal_score\nplay b C3\ngenmove w\nquit\n",
    );
    let r = session(
        &["--model", model.to_str().unwrap(), "--visits", "50"],
        script.as_bytes(),
    );
    let n = r.len();
    assert_eq!(r[n - 6], "= B5", "{r:?}");
    assert_eq!(r[n - 5].split(' ').count(), 1 + 18, "{}", r[n - 5]);
    assert_eq!(r[n - 4], "= B+2");
    // Play goes on after the two passes, as in KataGo and GNU Go (KGS's cleanup).
    assert_eq!(r[n - 3], "=", "{r:?}");
    assert!(
        r[n - 2].len() > 2 && !r[n - 2].starts_with('?'),
        "genmove after the end: {}",
        r[n - 2]
    );
}

#[test]
fn parameters_can_be_listed_read_and_set() {
    let r = session(
        &[],
        b"kata-list-params\nkata-get-param maxVisits\nkata-set-param maxVisits 50\nkata-get-param maxVisits\nkata-set-param cpuctExploration 99\nkata-set-param nonsense 1\nkata-raw-nn all\nquit\n",
    );
    assert!(
        r[0].contains("maxVisits") && r[0].contains("cpuctExploration"),
        "{}",
        r[0]
    );
    assert_eq!(r[1], "= 800");
    assert_eq!(r[2], "=");
    assert_eq!(r[3], "= 50");
    assert!(r[4].starts_with("? cpuctExploration must be"), "{}", r[4]);
    assert!(r[5].starts_with("? unknown parameter"), "{}", r[5]);
    // The classical evaluator answers kata-raw-nn too: 8 blocks of a 19x19 board.
    assert_eq!(r[6].matches("symmetry ").count(), 8, "{}", r[6]);
}

#[test]
fn raw_network_outputs_in_katagos_layout() {
    let Some(model) = shared_model() else {
        return;
    };
    let r = session(
        &["--model", model.to_str().unwrap()],
        b"boardsize 9\nplay b E5\nkata-raw-nn 0\nkata-raw-nn 9\nquit\n",
    );
    let block: Vec<&str> = r[2].lines().collect();
    assert_eq!(block[0], "=");
    assert_eq!(block[1], "symmetry 0");
    let value = |key: &str| -> f64 {
        let l = block.iter().find(|l| l.starts_with(key)).unwrap();
        l.split_whitespace().nth(1).unwrap().parse().unwrap()
    };
    let (w, l, n) = (value("whiteWin"), value("whiteLoss"), value("noResult"));
    assert!((w + l + n - 1.0).abs() < 1e-4, "{w} {l} {n}");
    let p = block.iter().position(|l| *l == "policy").unwrap();
    let rows = &block[p + 1..p + 10];
    let mut total = 0.0;
    for row in rows {
        let cells: Vec<&str> = row.split_whitespace().collect();
        assert_eq!(cells.len(), 9);
        total += cells
            .iter()
            .filter(|c| **c != "NAN")
            .map(|c| c.parse::<f64>().unwrap())
            .sum::<f64>();
    }
    assert_eq!(
        rows[4].split_whitespace().nth(4),
        Some("NAN"),
        "E5 is occupied"
    );
    total += value("policyPass");
    assert!((total - 1.0).abs() < 1e-3, "policy sums to {total}");
    let o = block.iter().position(|l| *l == "whiteOwnership").unwrap();
    assert_eq!(block.len(), o + 10);
    assert!(r[3].starts_with("? bad symmetry"), "{}", r[3]);
}

#[test]
fn gogui_boards_are_listed_and_drawn() {
    let r = session(
        &[],
        b"boardsize 9\ngogui-analyze_commands\ntengen-ownership\ntengen-policy\nquit\n",
    );
    assert!(
        r[1].lines()
            .all(|l| l.starts_with("= gfx/") || l.starts_with("gfx/")),
        "{}",
        r[1]
    );
    let influence: Vec<&str> = r[2].split_whitespace().collect();
    assert_eq!(influence[1], "INFLUENCE");
    assert_eq!(influence.len(), 2 + 2 * 81, "{}", r[2]);
    // Without a network the classical engine's prior labels the open points near the
    // centre (third line and in) on an empty board, none on the first two lines.
    let labels: Vec<&str> = r[3].split_whitespace().collect();
    assert_eq!(labels[..2], ["=", "LABEL"], "{}", r[3]);
    assert!(labels.len() > 4, "{}", r[3]);
    for point in labels[2..].iter().step_by(2) {
        let col = point.as_bytes()[0];
        let row: u32 = point[1..].parse().unwrap();
        assert!(
            (b'C'..=b'G').contains(&col) && (3..=7).contains(&row),
            "{point} in {}",
            r[3]
        );
    }
}

#[test]
fn cleanup_captures_dead_stones_instead_of_passing() {
    let Some(model) = shared_model() else {
        return;
    };
    // The walls of the dead-stone test; White's B5 is dead inside Black's area. In cleanup
    // Black must not pass while B5 stands.
    let mut script = walled_game();
    script.push_str("play w B5\nkgs-genmove_cleanup b\nquit\n");
    let r = session(
        &["--model", model.to_str().unwrap(), "--visits", "50"],
        script.as_bytes(),
    );
    let mv = &r[r.len() - 2];
    assert!(
        mv.starts_with("= ") && mv != "= pass" && mv != "= resign",
        "{mv}"
    );
}

#[test]
fn without_a_network_the_classical_engine_plays_and_judges() {
    // The walls of the dead-stone test, judged with no network at all.
    let mut script = walled_game();
    script.push_str("play w B5\nfinal_status_list dead\nfinal_score\ngenmove b\nquit\n");
    let r = session(&["--seed", "1"], script.as_bytes());
    let n = r.len();
    assert_eq!(r[n - 4], "= B5", "{r:?}");
    assert_eq!(r[n - 3], "= B+2");
    // Black's move is its own: on the board, legal, inside its wall (A-E).
    let mv = &r[n - 2];
    let col = mv.chars().nth(2).unwrap_or('?');
    assert!(mv.starts_with("= ") && ('A'..='E').contains(&col), "{mv}");
}

#[test]
fn parameters_can_be_set_on_the_command_line() {
    let r = session(
        &[
            "--param",
            "cpuctExploration=1.75",
            "--param",
            "nnPolicyTemperature = 2",
        ],
        b"kata-get-param cpuctExploration\nkata-get-param nnPolicyTemperature\nquit\n",
    );
    assert_eq!(r[0], "= 1.75");
    assert_eq!(r[1], "= 2");
    for bad in ["cpuctExploration=99", "nonsense=1", "cpuctExploration"] {
        let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
            .args(["gtp", "--param", bad])
            .stdin(std::process::Stdio::null())
            .output()
            .expect("tengen runs");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!out.status.success(), "--param {bad} was accepted");
        assert!(err.contains("--param"), "{bad}: {err}");
    }
}

#[test]
fn the_search_runs_over_the_classical_engine() {
    let script = "boardsize 9\nclear_board\nplay b E5\ngenmove w\nkata-raw-nn 0\nquit\n";
    let r = session(
        &["--engine", "search", "--visits", "300", "--threads", "2"],
        script.as_bytes(),
    );
    let mv = &r[r.len() - 3];
    assert!(
        mv.starts_with("= ") && mv != "= pass" && mv != "= resign" && mv != "= E5",
        "{mv}"
    );
    // The classical judgement stands in for the network's outputs.
    let raw = &r[r.len() - 2];
    assert!(raw.contains("whiteWin") && raw.contains("policy"), "{raw}");
}

/// `tengen gtp ARGS` over `script` with the log at info: (replies, log).
fn logged_session(args: &[&str], script: &str) -> (Vec<String>, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("gtp")
        .args(args)
        .env("RUST_LOG", "info")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("tengen runs");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(script.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    let replies = String::from_utf8(out.stdout)
        .unwrap()
        .trim_end_matches('\n')
        .split("\n\n")
        .map(str::to_string)
        .collect();
    (replies, String::from_utf8_lossy(&out.stderr).into_owned())
}

#[cfg(feature = "bundled-net")]
#[test]
fn without_a_model_the_bundled_network_plays() {
    // The raw outputs before the move: the search's move varies between runs.
    let script = "boardsize 9\nclear_board\nplay b E5\nkata-raw-nn 0\ngenmove w\nquit\n";
    let (r, log) = logged_session(&["--visits", "20"], script);
    assert!(
        log.contains("engine: search over the bundled network g170-b6c96")
            && log.contains("loaded model g170-b6c96"),
        "{log}"
    );
    let mv = &r[r.len() - 2];
    assert!(
        mv.starts_with("= ") && mv != "= pass" && mv != "= resign" && mv != "= E5",
        "{mv}"
    );
    let raw = &r[r.len() - 3];
    assert!(raw.contains("whiteWin") && raw.contains("policy"), "{raw}");
    // The network's outputs, not the classical judgement's.
    let (classic, _) = logged_session(&["--model", "none"], script);
    assert_ne!(raw, &classic[classic.len() - 3]);
    // The same network as the file it was built from.
    if let Some(model) = shared_model() {
        let (from_file, _) = logged_session(&["--model", model.to_str().unwrap()], script);
        assert_eq!(raw, &from_file[from_file.len() - 3]);
    }
    // `--engine classic` plays the classical engine and loads no network.
    let (_, log) = logged_session(&["--engine", "classic"], "genmove b\nquit\n");
    assert!(!log.contains("loaded model"), "{log}");
}

#[test]
fn the_default_backend_runs_model_files_and_onnx_graphs_go_to_tract() {
    let Some(model) = shared_model() else {
        return;
    };
    let script = "boardsize 9\nclear_board\nplay b E5\nkata-raw-nn 0\nquit\n";
    let default = support::backend::cpu_default();
    let (r, log) = logged_session(&["--model", model.to_str().unwrap()], script);
    assert!(
        log.contains(&format!("network for 9x9: {default}")),
        "{log}"
    );
    let raw = &r[r.len() - 2];
    assert!(raw.contains("whiteWin") && raw.contains("policy"), "{raw}");

    // An ONNX graph: the native backend does not run it, so tract does, with no error.
    let dir = tempfile::tempdir().unwrap();
    let onnx = dir.path().join("b6.onnx");
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args([
            "convert",
            model.to_str().unwrap(),
            "-o",
            onnx.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let (r, log) = logged_session(&["--model", onnx.to_str().unwrap()], script);
    assert!(log.contains("network for 9x9: tract"), "{log}");
    if default == "native" {
        assert!(log.contains("falling back to tract"), "{log}");
    }
    let from_onnx = &r[r.len() - 2];
    assert!(from_onnx.contains("whiteWin"), "{from_onnx}");
    // The same network either way: the win rate agrees to the printed digits or nearly.
    let win = |raw: &str| -> f64 {
        let mut words = raw.split_whitespace();
        words.find(|w| *w == "whiteWin");
        words
            .next()
            .and_then(|w| w.parse().ok())
            .expect("whiteWin value")
    };
    assert!(
        (win(raw) - win(from_onnx)).abs() < 1e-3,
        "{raw}\n{from_onnx}"
    );
}

#[test]
fn the_version_names_the_bundled_network() {
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .arg("--version")
        .output()
        .expect("tengen runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let bundled = if cfg!(feature = "bundled-net") {
        "(bundled network: g170-b6c96)"
    } else {
        "(no bundled network)"
    };
    assert!(text.contains(bundled), "{text}");
}

#[cfg(not(feature = "bundled-net"))]
#[test]
fn without_the_bundled_network_no_model_plays_the_classical_engine() {
    let (r, log) = logged_session(&[], "boardsize 9\ngenmove b\nquit\n");
    assert!(r[1].starts_with("= "), "{r:?}");
    assert!(!log.contains("loaded model"), "{log}");
    let out = Command::new(env!("CARGO_BIN_EXE_tengen"))
        .args(["gtp", "--model", "bundled"])
        .stdin(Stdio::null())
        .output()
        .expect("tengen runs");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("no bundled network"));
}

#[test]
fn kata_search_cancellable_is_cancelled_by_the_next_line() {
    // A search over the classical engine with a visit limit it will not reach in time.
    let pause = std::time::Duration::from_millis(400);
    let out = timed_session(
        &["--engine", "search", "--visits", "100000000"],
        &[
            "boardsize 9\n1 kata-search_cancellable b\n",
            "2 name\n",
            "3 kata-search_cancellable w\n",
            "\n",
            "4 showboard\nquit\n",
        ],
        pause,
    );
    let r: Vec<&str> = out.trim_end_matches('\n').split("\n\n").collect();
    // KataGo's reply to a cancelled search, then the line that cancelled it runs; an empty
    // line cancels too.
    assert_eq!(
        &r[..4],
        ["=", "=1 cancelled", "=2 Tengen", "=3 cancelled"],
        "{out}"
    );
    assert!(
        r[4].starts_with("=4") && r[4].contains("Next player: Black") && !r[4].contains('X'),
        "nothing was played: {out}"
    );
}

#[test]
fn stop_ends_a_running_analysis_and_then_stops_nothing() {
    let pause = std::time::Duration::from_millis(400);
    let out = timed_session(
        &[],
        &[
            "boardsize 9\n1 kata-analyze b 10\n",
            "2 stop\n3 stop\n4 genmove b\nquit\n",
        ],
        pause,
    );
    let r: Vec<&str> = out.trim_end_matches('\n').split("\n\n").collect();
    let analysis: Vec<&str> = r[1].lines().collect();
    assert_eq!(analysis[0], "=1", "{out}");
    assert!(
        analysis.len() >= 2 && analysis[1].starts_with("info move "),
        "{out}"
    );
    assert_eq!(&r[2..4], ["=2", "=3"], "{out}");
    assert!(r[4].starts_with("=4 ") && r[4] != "=4 resign", "{out}");
}

#[test]
fn kata_get_models_lists_no_model_without_a_network() {
    let r = session(&[], b"kata-get-models\nquit\n");
    assert_eq!(r[0], "= []");
}

#[cfg(feature = "bundled-net")]
#[test]
fn kata_get_models_names_the_bundled_network() {
    let (r, _) = logged_session(&[], "kata-get-models\nquit\n");
    let json = r[0].strip_prefix("= ").expect("success");
    let models: serde_json::Value = serde_json::from_str(json).expect("JSON");
    assert_eq!(models[0]["name"], "g170-b6c96.bin.gz", "{json}");
    assert_eq!(models[0]["internalName"], "g170-b6c96", "{json}");
    assert_eq!(models[0]["usesHumanSLProfile"], false, "{json}");
    assert!(models[0]["maxBatchSize"].as_u64() >= Some(1), "{json}");
}

#[test]
fn kata_search_analyze_cancellable_closes_with_play_cancelled() {
    let pause = std::time::Duration::from_millis(400);
    let out = timed_session(
        &["--engine", "search", "--visits", "100000000"],
        &[
            "boardsize 9\n1 kata-search_analyze_cancellable b 10\n",
            "2 name\n3 showboard\nquit\n",
        ],
        pause,
    );
    let r: Vec<&str> = out.trim_end_matches('\n').split("\n\n").collect();
    let search: Vec<&str> = r[1].lines().collect();
    assert_eq!(search[0], "=1", "{out}");
    assert!(search[1].starts_with("info move "), "{out}");
    assert_eq!(search.last(), Some(&"play cancelled"), "{out}");
    assert_eq!(r[2], "=2 Tengen", "{out}");
    assert!(
        r[3].contains("Next player: Black") && !r[3].contains('X'),
        "{out}"
    );
}

/// The backends a rank is played on here: tract, native, and ONNX Runtime when built with it and
/// its library is given (as the test command does).
fn rank_backends() -> Vec<&'static str> {
    let mut backends = vec!["tract", "native"];
    if cfg!(feature = "ort") && std::env::var_os("ORT_DYLIB_PATH").is_some_and(|p| !p.is_empty()) {
        backends.push("ort");
    } else {
        println!("ONNX Runtime skipped: not built with `ort` or ORT_DYLIB_PATH not set");
    }
    backends
}

/// `(column, row)` of a GTP vertex on an `n`-line board (no I column), if it is one.
fn vertex_on(v: &str, n: usize) -> Option<(usize, usize)> {
    let mut chars = v.chars();
    let letter = chars.next()?.to_ascii_uppercase();
    let col = "ABCDEFGHJKLMNOPQRST".find(letter)?;
    let row: usize = chars.as_str().parse().ok()?;
    (col < n && (1..=n).contains(&row)).then_some((col, row))
}

#[cfg(feature = "bundled-net")]
#[test]
fn a_rank_plays_on_every_board_size_and_backend() {
    for backend in rank_backends() {
        for n in [9usize, 13, 19] {
            // A rank from the command line, another set mid-game, one refused.
            let script = format!(
                "boardsize {n}\nclear_board\ngenmove b\ngenmove w\ntengen-level 2d\n\
                 genmove b\ntengen-level 26k\ngenmove w\nquit\n"
            );
            let args = ["--strength", "20k", "--threads", "1", "--backend", backend];
            let (r, log) = logged_session(&args, &script);
            let what = format!("{backend} {n}x{n}: {r:?}");
            assert!(log.contains(&format!("({backend}, 1 threads)")), "{log}");
            assert!(log.contains("strength: 20k"), "{log}");
            assert_eq!(r[4], "=", "{what}");
            assert!(r[6].starts_with("? "), "26k is no rank: {what}");
            let moves: Vec<&str> = [2, 3, 5, 7].map(|i| r[i].as_str()).to_vec();
            for m in &moves {
                let v = m.strip_prefix("= ").unwrap_or_else(|| panic!("{what}"));
                assert!(vertex_on(v, n).is_some(), "{v} is not on the board: {what}");
            }
            let mut distinct = moves.clone();
            distinct.sort_unstable();
            distinct.dedup();
            assert_eq!(distinct.len(), moves.len(), "a point played twice: {what}");
        }
    }
}

#[test]
fn a_human_sl_net_plays_at_the_profile_set_and_asks_for_one_without_it() {
    let net = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../nn/tests/nets/t-b2c48nbt-meta.bin.gz"
    );
    // KataGo's output for this net on an empty 9x9 board, Black to move, Japanese rules, at
    // rank_5k (the committed golden file's record of that position).
    let golden = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../nn/tests/nets/t-b2c48nbt-meta.rawnn.jsonl"
    ))
    .expect("golden file");
    let record: serde_json::Value = golden
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).expect("JSON"))
        .find(|r| r["id"] == "p048" && r["humanSLProfile"] == "rank_5k")
        .expect("p048 at rank_5k");
    let want = record["output"]["whiteWin"].as_f64().expect("whiteWin");
    for backend in ["native", "tract"] {
        let replies = session(
            &["--model", net, "--backend", backend, "--visits", "8"],
            b"boardsize 9\nclear_board\nkata-set-rules japanese\nkomi 6.5\nkata-raw-nn 0\n\
             genmove b\nkata-set-param humanSLProfile rank_5k\nkata-raw-nn 0 0\ngenmove b\nquit\n",
        );
        let (no_profile, no_move) = (&replies[4], &replies[5]);
        assert!(
            no_profile.starts_with('?') && no_profile.contains("humanSLProfile"),
            "{no_profile}"
        );
        assert!(no_move.starts_with('?'), "{no_move}");
        let raw = &replies[7];
        let got: f64 = raw
            .lines()
            .find_map(|l| l.strip_prefix("whiteWin "))
            .unwrap_or_else(|| panic!("{backend}: {raw}"))
            .parse()
            .expect("a number");
        assert!(
            (got - want).abs() < 2e-6,
            "{backend}: whiteWin {got}, KataGo {want}"
        );
        assert!(replies[8].starts_with("= "), "{backend}: {}", replies[8]);
    }
}
