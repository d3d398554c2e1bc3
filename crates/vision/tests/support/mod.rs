//! Helpers shared by the stone-reading tests.

use tengen_vision::StoneReader;

/// The committed network, or the candidate file named by `TENGEN_STONES_ONNX` (to measure
/// a newly trained network before it replaces the committed one).
pub fn stone_reader() -> StoneReader {
    match std::env::var_os("TENGEN_STONES_ONNX") {
        Some(path) => StoneReader::from_onnx(&std::fs::read(path).expect("the candidate file"))
            .expect("a network of the reader's shape"),
        None => StoneReader::new().expect("the committed model loads"),
    }
}
