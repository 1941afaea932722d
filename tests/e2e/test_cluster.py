"""The cluster's membership and peer port, with a real etcd and real gateways on loopback:

  - Three gateways in three zones join one cluster: each sees all three, with the same
    epoch, and reaches each over the peer transport (the HMAC handshake and a ping);
    `strata-admin cluster status` prints them; /metrics counts them.
  - A gateway stopped with SIGTERM leaves at once; one killed with SIGKILL leaves when its
    lease expires; the epoch moves with each change; a killed gateway restarted before its
    old registration expired waits for it and joins again.
  - A second gateway with a node name already taken by a live one does not start.
  - The peer port gives nothing to a stranger: garbage, a truncated hello and a gateway
    holding another secret are refused (the last shows as unreachable, access denied), and
    the gateway keeps serving S3 and its members.
"""
import json
import socket
import time

import requests

import s3sign
from conftest import StrataServer, admin, dump_toml, free_port, make_client
from etcd import EtcdServer
from upstream import wait_until

SECRET = "e2e-cluster-secret-0123456789"
LEASE = "2s"  # etcd's least: a killed member leaves within about this


def cluster_overrides(etcd, node, zone, secret=SECRET):
    return {"cluster": {"node": node, "zone": zone, "peer_listen": f"127.0.0.1:{free_port()}",
                        "etcd": [etcd.url], "replicas": 3, "secret": secret,
                        "lease_ttl": LEASE}}


def run_trio(tmp_path_factory, replicas=3, extra=None):
    """A fixture's body: etcd and gw-a, gw-b, gw-c in three zones, once each sees all three,
    with the bucket "shared"; yields the gateways, stops everything after. `extra`: more
    configuration sections for each gateway (tiers, [writeback], [lifecycle])."""
    etcd = EtcdServer(tmp_path_factory.mktemp("etcd")).start()
    gws = []
    try:
        for i, n in enumerate("abc", 1):
            overrides = {**(extra or {}), **cluster_overrides(etcd, f"gw-{n}", f"zone-{i}")}
            overrides["cluster"]["replicas"] = replicas
            gws.append(StrataServer(tmp_path_factory.mktemp(f"gw-{n}"), overrides).start())
        for gw in gws:
            wait_until(lambda: members(gw) == ["gw-a", "gw-b", "gw-c"],
                       what="the three members", srv=gw)
        make_client(gws[0]).create_bucket(Bucket="shared")
        yield gws
    finally:
        # Each one stopped even when another fails to stop (which fails the test).
        failures = []
        for gw in gws:
            try:
                if gw.running():
                    gw.stop()
            except BaseException as failure:  # pytest.fail raises a BaseException
                failures.append(failure)
        etcd.stop()
        if failures:
            raise failures[0]


def status(srv, probe=True):
    """The gateway's cluster view: through strata-admin (which pings every member), or
    without the pings straight from the admin API."""
    if probe:
        return json.loads(admin(srv, "cluster", "status", "--json"))
    path, query = "/_strata/admin/cluster", [("probe", "false")]
    signer = s3sign.SigV4(srv.access_key, srv.secret_key, srv.region)
    headers = {"host": srv.netloc, "x-amz-date": s3sign.amz_now(),
               "x-amz-content-sha256": s3sign.EMPTY_SHA256}
    headers["authorization"] = signer.authorization("GET", path, query, headers,
                                                    s3sign.EMPTY_SHA256)
    r = requests.get(srv.endpoint + path + "?probe=false", headers=headers, timeout=10)
    assert r.status_code == 200, r.text
    return r.json()


def members(srv):
    return sorted(m["node"] for m in status(srv, probe=False)["members"])


def start_three(strata_factory, etcd):
    return [strata_factory(cluster_overrides(etcd, f"gw-{n}", f"zone-{i}"), name=f"gw-{n}")
            for i, n in enumerate("abc", 1)]


def test_three_gateways_form_one_cluster(strata_factory, etcd):
    gws = start_three(strata_factory, etcd)
    # Each joined before serving S3, so the last one to start sees all three at once; the
    # others see it through their watch.
    for gw in gws:
        wait_until(lambda: members(gw) == ["gw-a", "gw-b", "gw-c"],
                   what=f"{gw.workdir.name} to see the three members", srv=gw)
    views = [status(gw) for gw in gws]
    assert len({v["epoch"] for v in views}) == 1, [v["epoch"] for v in views]
    for gw, view in zip(gws, views):
        assert view["cluster"] is True and view["may_accept_writes"] is True
        assert view["node"] == gw.workdir.name and view["replicas"] == 3
        assert sorted(m["zone"] for m in view["members"]) == ["zone-1", "zone-2", "zone-3"]
        for m in view["members"]:
            assert m["reachable"] is True, m
            assert m["epoch"] == view["epoch"], m
            assert m["self"] == (m["node"] == gw.workdir.name)
        assert view["membership"]["keepalives"] >= 0
    # Every gateway answered a ping from each of the three.
    assert all(status(gw, probe=False)["transport"]["calls_served"] >= 3 for gw in gws)

    text = admin(gws[0], "cluster", "status")
    assert "3 members" in text and "writes accepted" in text, text
    assert "gw-a *" in text and "yes" in text, text
    page = requests.get(gws[1].endpoint + "/metrics", timeout=10).text
    assert "strata_cluster_members 3" in page, page
    assert "strata_cluster_may_accept_writes 1" in page

    # Any gateway serves S3 as before.
    s3 = make_client(gws[2])
    s3.create_bucket(Bucket="clustered")
    s3.put_object(Bucket="clustered", Key="k", Body=b"v")
    assert s3.get_object(Bucket="clustered", Key="k")["Body"].read() == b"v"


def test_members_leave_on_stop_and_on_lease_expiry_and_rejoin(strata_factory, etcd):
    a, b, c = start_three(strata_factory, etcd)
    wait_until(lambda: members(a) == ["gw-a", "gw-b", "gw-c"], what="three members", srv=a)
    epoch = status(a, probe=False)["epoch"]

    # SIGTERM: c revokes its lease on the way out; a sees it gone at once (no lease wait).
    stopped_at = time.monotonic()
    c.stop()
    wait_until(lambda: members(a) == ["gw-a", "gw-b"], timeout=10, what="gw-c to leave", srv=a)
    assert time.monotonic() - stopped_at < 10
    after_stop = status(a, probe=False)["epoch"]
    assert after_stop > epoch

    # SIGKILL: b cannot revoke; it leaves when its 2 s lease expires.
    b.kill()
    wait_until(lambda: members(a) == ["gw-a"], timeout=20, what="gw-b's lease to expire", srv=a)
    assert status(a, probe=False)["epoch"] > after_stop

    # Killed and restarted at once, its registration still alive (a 6 s lease renewed at
    # most 2 s before the kill; the new run reaches etcd in about a second): the new run
    # waits for the old registration to expire, then joins.
    b.start()
    wait_until(lambda: members(a) == ["gw-a", "gw-b"], timeout=20, what="gw-b back", srv=a)
    b.config["cluster"]["lease_ttl"] = "6s"
    b.config_path.write_text(dump_toml(b.config))
    b.restart()
    wait_until(lambda: members(a) == ["gw-a", "gw-b"], timeout=20, what="gw-b, 6 s lease", srv=a)
    b.kill()
    b.start()  # returns once S3 is served, which is after the join
    wait_until(lambda: members(a) == ["gw-a", "gw-b"] and
               all(m["reachable"] for m in status(a)["members"]),
               timeout=30, what="gw-b to rejoin after a crash", srv=b)
    this_run = (b.workdir / f"strata.{b.starts}.stdout").read_text()
    assert "registered already" in this_run and "joined" in this_run, this_run


def test_a_node_name_taken_by_a_live_member_is_refused(strata_factory, etcd):
    a = strata_factory(cluster_overrides(etcd, "gw-a", "zone-1"), name="gw-a")
    twin = strata_factory(cluster_overrides(etcd, "gw-a", "zone-2"), start=False, name="twin")
    twin.start(wait=False)
    rc = twin.wait_exit(timeout=30)
    assert rc != 0
    assert "gw-a" in twin.logs() and "cannot join" in twin.logs(), twin.logs()
    assert members(a) == ["gw-a"]
    assert status(a)["members"][0]["reachable"] is True


def read_until_closed(sock, timeout=10):
    """Whatever the server sends before it closes the connection; fails on a timeout."""
    sock.settimeout(timeout)
    got = b""
    while True:
        chunk = sock.recv(65536)
        if not chunk:
            return got
        got += chunk


def test_the_peer_port_gives_strangers_nothing(strata_factory, etcd):
    a = strata_factory(cluster_overrides(etcd, "gw-a", "zone-1"), name="gw-a")
    host, port = a.config["cluster"]["peer_listen"].split(":")
    failed_before = status(a, probe=False)["transport"]["sessions_failed"]

    # Garbage, and a hello cut short: the connection is closed, nothing is answered.
    for junk in (b"GET / HTTP/1.1\r\nHost: x\r\n\r\n", b"STPF\x01\x01\x00\x00" + b"\x00" * 8):
        with socket.create_connection((host, int(port)), timeout=5) as s:
            s.sendall(junk)
            if len(junk) < 32:
                s.shutdown(socket.SHUT_WR)  # the rest of the header never comes
            assert read_until_closed(s) == b""
    wait_until(lambda: status(a, probe=False)["transport"]["sessions_failed"] >= failed_before + 2,
               what="both sessions counted as failed", srv=a)

    # A gateway with another secret joins etcd, but the peer port refuses it both ways.
    stranger = strata_factory(cluster_overrides(etcd, "gw-x", "zone-2", secret="x" * 32),
                              name="gw-x")
    wait_until(lambda: members(a) == ["gw-a", "gw-x"], what="gw-x registered", srv=a)
    view = {m["node"]: m for m in status(a)["members"]}
    assert view["gw-a"]["reachable"] is True
    assert view["gw-x"]["reachable"] is False and view["gw-x"]["error"], view
    theirs = {m["node"]: m for m in status(stranger)["members"]}
    assert theirs["gw-a"]["reachable"] is False, theirs

    # Still serving S3 and its own peer port.
    s3 = make_client(a)
    s3.create_bucket(Bucket="alive")
    assert status(a)["members"][0]["reachable"] is True


def test_status_of_a_gateway_without_a_cluster(server):
    assert json.loads(admin(server, "cluster", "status", "--json")) == {"cluster": False}
    assert "not in a cluster" in admin(server, "cluster", "status")
