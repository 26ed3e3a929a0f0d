"""Sensors for the ipmi_sim peer: each a Full Sensor Record in the main SDR repository
(IPMI 2.0 section 43.1, table 43-1) and a sensor with its raw reading, as ipmi_sim's
command file takes them (`main_sdr_add`, `sensor_add`, `sensor_set_value`;
ipmi_sim_cmd(5)). A reading is `m * raw` in its unit: linear, no offset, no exponent."""

from __future__ import annotations

from dataclasses import dataclass

# Base unit codes (IPMI 2.0 table 43-15) and sensor type codes (table 42-3).
CELSIUS, WATTS, RPM = 1, 6, 18
TEMPERATURE, FAN, POWER_SUPPLY = 0x01, 0x04, 0x08
THRESHOLD = 0x01  # event/reading type: threshold-based


@dataclass(frozen=True)
class SimSensor:
    number: int  # 1.. (0 is the watchdog's, by ipmi_sim's convention)
    name: str  # at most 16 ASCII characters
    sensor_type: int
    unit: int
    raw: int  # 0..255
    m: int = 1  # 1..255

    @property
    def reading(self) -> float:
        return float(self.m * self.raw)


def full_sensor_record(sensor: SimSensor, record_id: int) -> bytes:
    name = sensor.name.encode("ascii")
    assert len(name) <= 16 and 0 < sensor.m < 256 and 0 <= sensor.raw < 256
    body = bytes(
        [
            0x20, 0x00, sensor.number,  # key: owner (the BMC), LUN, number
            0x07, 0x01,  # entity: system board, instance 1
            0x7F, 0x48,  # initialised, scanning; auto re-arm, readable thresholds
            sensor.sensor_type, THRESHOLD,
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  # no event masks
            0x00, sensor.unit, 0x00,  # unsigned; base unit; no modifier unit
            0x00,  # linear
            sensor.m, 0x00, 0x00, 0x00, 0x00, 0x00,  # M, tolerance, B, accuracy, exponents
            0x00,  # no nominal, normal max or min given
            0x00, 0x00, 0x00, 0xFF, 0x00,  # nominal, normal max/min, sensor max/min
            0x00, 0x00, 0x00, 0x00, 0x00, 0x00,  # thresholds (none readable)
            0x00, 0x00, 0x00, 0x00, 0x00,  # hysteresis, reserved, OEM
            0xC0 | len(name),  # ID string: 8-bit ASCII
        ]
    ) + name  # fmt: skip
    header = bytes([record_id & 0xFF, record_id >> 8, 0x51, 0x01, len(body)])
    return header + body


def emu_lines(sensors: list[SimSensor]) -> str:
    lines = []
    for record_id, sensor in enumerate(sensors, start=1):
        record = full_sensor_record(sensor, record_id)
        lines.append("main_sdr_add 0x20 " + " ".join(f"{b:#04x}" for b in record))
        lines.append(f"sensor_add 0x20 0 {sensor.number} {sensor.sensor_type:#04x} 0x01")
        lines.append(f"sensor_set_value 0x20 0 {sensor.number} {sensor.raw:#04x} 0")
    return "".join(f"{line}\n" for line in lines)
