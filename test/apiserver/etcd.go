package main

import (
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
)

func loopbackURL(port int) url.URL {
	return url.URL{Scheme: "http", Host: "127.0.0.1:" + strconv.Itoa(port)}
}

// startEtcd runs a single-member etcd in this process; an existing DIR/etcd is reopened as is, so a restart
// after SIGKILL keeps every object and its resourceVersion.
func startEtcd(dataDir string, p ports) (*embed.Etcd, *clientv3.Client, error) {
	cfg := embed.NewConfig()
	cfg.Name = "krply"
	cfg.Dir = filepath.Join(dataDir, "etcd")
	client, peer := loopbackURL(p.Etcd), loopbackURL(p.EtcdPeer)
	cfg.ListenClientUrls = []url.URL{client}
	cfg.AdvertiseClientUrls = []url.URL{client}
	cfg.ListenPeerUrls = []url.URL{peer}
	cfg.AdvertisePeerUrls = []url.URL{peer}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.LogLevel = "warn"
	cfg.LogOutputs = []string{filepath.Join(dataDir, "etcd.log")}
	// fsync only protects against a machine crash; a killed process leaves its writes in the page cache, and
	// skipping fsync makes every API write several times faster on slow CI disks.
	cfg.UnsafeNoFsync = true
	// The watch cache only learns that the global revision moved (and so can send a BOOKMARK on a quiet
	// resource) from etcd progress notifications; etcd's default of 10 minutes would starve short watches.
	cfg.WatchProgressNotifyInterval = time.Second

	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case err := <-e.Err():
		e.Close()
		return nil, nil, err
	case <-time.After(time.Minute):
		e.Close()
		return nil, nil, fmt.Errorf("etcd not ready after 1 minute")
	}
	cli, err := clientv3.New(clientv3.Config{
		Endpoints:   []string{client.String()},
		DialTimeout: 5 * time.Second,
	})
	if err != nil {
		e.Close()
		return nil, nil, err
	}
	return e, cli, nil
}
