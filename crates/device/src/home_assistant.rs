//! Home Assistant MQTT discovery: retained sensor configurations that make the appliance
//! appear as a device (win rate, score lead, side to move, move count) with its availability.

use serde_json::{json, Value};

/// The discovery messages for a device publishing under `prefix` (e.g. `tengen/kiosk-1`),
/// with `discovery` the Home Assistant discovery prefix (usually `homeassistant`).
pub fn discovery(discovery: &str, prefix: &str, device_id: &str) -> Vec<(String, String)> {
    let uid = format!("tengen_{}", device_id.replace('-', "_"));
    let device = json!({
        "identifiers": [uid],
        "name": format!("Tengen {device_id}"),
        "manufacturer": "Tengen",
        "model": "Go appliance",
        "sw_version": env!("CARGO_PKG_VERSION"),
    });
    let sensor = |key: &str, name: &str, topic: &str, template: &str, unit: Option<&str>| {
        let mut c = json!({
            "name": name,
            "unique_id": format!("{uid}_{key}"),
            "object_id": format!("{uid}_{key}"),
            "state_topic": format!("{prefix}/{topic}"),
            "value_template": template,
            "availability_topic": format!("{prefix}/availability"),
            "payload_available": "online",
            "payload_not_available": "offline",
            "device": device.clone(),
        });
        if let (Some(u), Value::Object(m)) = (unit, &mut c) {
            m.insert("unit_of_measurement".into(), Value::from(u));
        }
        (
            format!("{discovery}/sensor/{uid}_{key}/config"),
            c.to_string(),
        )
    };
    vec![
        sensor(
            "winrate",
            "Win rate (side to move)",
            "analysis",
            "{{ (value_json.winrate * 100) | round(1) }}",
            Some("%"),
        ),
        sensor(
            "score_lead",
            "Score lead (side to move)",
            "analysis",
            "{{ value_json.scoreLead | round(1) }}",
            Some("points"),
        ),
        sensor(
            "to_move",
            "To move",
            "state",
            "{{ value_json.to_move }}",
            None,
        ),
        sensor(
            "moves",
            "Moves played",
            "state",
            "{{ value_json.moves | length }}",
            None,
        ),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sensors_point_at_the_device_topics() {
        let msgs = discovery("homeassistant", "tengen/kiosk-1", "kiosk-1");
        assert_eq!(msgs.len(), 4);
        for (topic, payload) in &msgs {
            assert!(topic.starts_with("homeassistant/sensor/tengen_kiosk_1_"));
            assert!(topic.ends_with("/config"));
            let v: Value = serde_json::from_str(payload).unwrap();
            assert!(v["state_topic"]
                .as_str()
                .unwrap()
                .starts_with("tengen/kiosk-1/"));
            assert_eq!(v["availability_topic"], "tengen/kiosk-1/availability");
            assert_eq!(v["device"]["identifiers"][0], "tengen_kiosk_1");
        }
    }
}
