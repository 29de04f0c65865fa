//! What the emulated hardware remembers between commands: the counters every
//! NIC port and switch port keeps, and the configuration the read-only tools
//! print (`ethtool`, `mlnx_qos`, `dcb`, `tc`, `lldpctl`, sysfs). Values are true
//! totals kept as `f64` so fractional rates accrue exactly; the renderers
//! (`host_out`, `switch_out`) round them and apply each real counter's width
//! (a 32-bit IB port counter saturates, a reloaded switch starts from zero).
//!
//! Field names are the model's, not a vendor's: the renderers map them to
//! the names the real tools print.

/// Counters of one priority (PCP/TC) on one port.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct PrioCounters {
    pub rx_bytes: f64,
    pub rx_packets: f64,
    pub tx_bytes: f64,
    pub tx_packets: f64,
    /// PFC pause frames received on this priority (the peer asked us to stop).
    pub rx_pause: f64,
    /// Microseconds this priority was paused by received pause frames.
    pub rx_pause_duration_us: f64,
    /// PFC pause frames this port sent on this priority.
    pub tx_pause: f64,
    pub tx_pause_duration_us: f64,
}

/// One host NIC port (one netdev, one RDMA device, port 1).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct NicCounters {
    pub rx_bytes: f64,
    pub tx_bytes: f64,
    pub rx_packets: f64,
    pub tx_packets: f64,
    pub prio: [PrioCounters; 8],
    /// Received packets dropped for lack of receive buffer (`rx_discards_phy`).
    pub rx_discards: f64,
    pub rx_crc_errors: f64,
    pub rx_symbol_errors: f64,
    /// Bits corrected by FEC.
    pub rx_corrected_bits: f64,
    /// Codewords FEC could not correct.
    pub fec_uncorrectable: f64,
    pub link_down_events: f64,
    // RDMA (hw_counters).
    /// CNPs this NIC sent as the notification point (it received ECN-marked packets).
    pub np_cnp_sent: f64,
    pub np_ecn_marked_roce_packets: f64,
    /// CNPs this NIC handled as the reaction point (it slowed a QP down).
    pub rp_cnp_handled: f64,
    pub out_of_sequence: f64,
    pub packet_seq_err: f64,
    pub local_ack_timeout_err: f64,
    /// RoCE packets retransmitted (go-back-N after a NAK or a timeout).
    pub retransmits: f64,
    pub req_cqe_error: f64,
}

/// One switch port (one direction each way: rx from the cable, tx to it).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct PortCounters {
    pub rx_bytes: f64,
    pub tx_bytes: f64,
    pub rx_packets: f64,
    pub tx_packets: f64,
    pub prio: [PrioCounters; 8],
    /// Packets dropped at this port's egress queue (no buffer), per traffic class.
    pub tc_drops: [f64; 8],
    /// Packets ECN-marked at this port's egress queue, per traffic class.
    pub tc_ecn_marked: [f64; 8],
    /// Peak occupancy of each egress queue since the counters were cleared, bytes.
    pub tc_watermark_bytes: [f64; 8],
    pub rx_crc_errors: f64,
    pub rx_symbol_errors: f64,
    pub link_down_events: f64,
}

/// What a NIC's configuration tools print.
#[derive(Debug, Clone, PartialEq)]
pub struct NicConfig {
    pub netdev: String,
    pub device: String,
    /// Negotiated speed in Mb/s (0 while the link is down).
    pub speed_mbps: u64,
    pub link_up: bool,
    /// Administratively up (`ip link set … up`); the link needs both ends up.
    pub admin_up: bool,
    pub mtu: u32,
    pub driver_version: String,
    pub firmware: String,
    /// PCI address, e.g. `0000:1a:00.0`.
    pub bus_info: String,
    /// PFC enabled per priority.
    pub pfc: [bool; 8],
    /// `true` for trust DSCP, `false` for trust PCP.
    pub trust_dscp: bool,
    /// Priority of each DSCP value.
    pub dscp2prio: [u8; 64],
    /// The neighbour LLDP learned on this port: (switch name, port name, management address).
    pub neighbor: Option<(String, String, String)>,
    pub mac: [u8; 6],
}

/// What a switch port's configuration tools print.
#[derive(Debug, Clone, PartialEq)]
pub struct PortConfig {
    pub name: String,
    pub speed_mbps: u64,
    pub link_up: bool,
    /// Administratively up (`ip link set … up`).
    pub admin_up: bool,
    pub mtu: u32,
    pub pfc: [bool; 8],
    /// ECN marking thresholds per traffic class, bytes: (min, max, probability at max in %).
    pub ecn: [Option<(u64, u64, u32)>; 8],
    /// What is plugged into the port, as its LLDP agent would learn it
    /// while the link is up (the cable as plugged, not as the inventory says).
    pub neighbor: Option<Neighbor>,
}

/// The far end of a switch port's cable, as LLDP describes it.
#[derive(Debug, Clone, PartialEq)]
pub enum Neighbor {
    /// A host NIC running lldpd with its defaults: the port id is the
    /// interface's MAC, the port description its name.
    Host {
        node: String,
        netdev: String,
        mac: [u8; 6],
        mgmt: String,
    },
    /// Another switch's port, advertised by name.
    Switch {
        name: String,
        port: String,
        mgmt: String,
    },
}
