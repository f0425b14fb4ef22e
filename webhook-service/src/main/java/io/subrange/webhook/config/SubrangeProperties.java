package io.subrange.webhook.config;

import io.subrange.allocator.net.Cidr;
import io.subrange.allocator.net.IpFamily;
import io.subrange.allocator.port.PortRange;
import jakarta.validation.Valid;
import jakarta.validation.constraints.Max;
import jakarta.validation.constraints.Min;
import jakarta.validation.constraints.NotEmpty;
import jakarta.validation.constraints.NotNull;
import java.time.Duration;
import java.util.List;
import org.springframework.boot.context.properties.ConfigurationProperties;
import org.springframework.boot.context.properties.bind.DefaultValue;
import org.springframework.validation.annotation.Validated;

/**
 * Everything under {@code subrange.*}. Spring's relaxed binding applies, so
 * {@code SUBRANGE_SERVICE_CIDRS=10.96.0.0/12} sets {@code subrange.service.cidrs}. A value
 * that does not parse or validate stops startup with the property's name and the value.
 */
@Validated
@ConfigurationProperties(prefix = "subrange")
public record SubrangeProperties(
    @Valid @NotNull @DefaultValue Service service,
    @Valid @NotNull @DefaultValue Pod pod,
    @NotNull @DefaultValue("memory") StoreKind store,
    @NotNull @DefaultValue("all") Role role,
    @Valid @NotNull @DefaultValue Admission admission,
    @Valid @NotNull @DefaultValue Tls tls,
    @Valid @NotNull @DefaultValue Kubernetes kubernetes,
    @Valid @NotNull @DefaultValue Reconciler reconciler) {

  /** Where allocations are kept. */
  public enum StoreKind {
    /**
     * In this process only, for one replica: lost on restart, and loaded from the cluster by the
     * in-process reconciler before anything is handed out (when the API is used).
     */
    MEMORY,
    /** ConfigMaps in subrange's namespace, shared by every replica (see ConfigMapAllocationStore). */
    KUBERNETES
  }

  /** What this process does. */
  public enum Role {
    /** Admission webhook and reconciler in one process: local runs, one replica. */
    ALL,
    /** Admission only; many replicas may run. */
    WEBHOOK,
    /** The reconciler only (its own Deployment); one of them leads at a time (a Lease). */
    RECONCILER;

    public boolean admits() {
      return this != RECONCILER;
    }

    public boolean reconciles() {
      return this != WEBHOOK;
    }
  }

  /**
   * @param cidrs Service CIDRs, comma-separated; the first is the primary family, at most one
   *     per family (as kube-apiserver's {@code --service-cluster-ip-range})
   * @param nodePortRange inclusive NodePort range (as {@code --service-node-port-range})
   * @param maxNodePortsPerService how many NodePorts (healthCheckNodePort included) one Service
   *     may newly take in one request: values are reserved in admission, before the API server's
   *     own checks and quotas, so without a cap one Service could empty the range
   */
  public record Service(
      @NotEmpty @ServiceCidrs @DefaultValue("10.96.0.0/12") List<Cidr> cidrs,
      @NotNull @DefaultValue("30000-32767") PortRange nodePortRange,
      @Min(1) @DefaultValue("100") int maxNodePortsPerService) {

    /** The family of the first CIDR: what a Service gets when it does not say. */
    public IpFamily primaryFamily() {
      return cidrs.get(0).family();
    }
  }

  /**
   * Pod CIDRs for Nodes, as kube-controller-manager's {@code --cluster-cidr} and
   * {@code --node-cidr-mask-size-ipv4/ipv6}: they make the default ClusterCIDR.
   *
   * @param clusterCidrs comma-separated, at most one per family; empty for none (ClusterCIDR
   *     objects may still provide ranges)
   * @param nodeMaskSizeIpv4 prefix length of each node's IPv4 block
   * @param nodeMaskSizeIpv6 prefix length of each node's IPv6 block
   */
  @PodCidrs
  public record Pod(
      @NotNull @DefaultValue List<Cidr> clusterCidrs,
      @Min(1) @Max(32) @DefaultValue("24") int nodeMaskSizeIpv4,
      @Min(1) @Max(128) @DefaultValue("64") int nodeMaskSizeIpv6) {

    public int nodeMaskSize(IpFamily family) {
      return family == IpFamily.IPV4 ? nodeMaskSizeIpv4 : nodeMaskSizeIpv6;
    }
  }

  /**
   * @param timeout how long one admission request may wait for its allocation to become
   *     durable; keep it under the webhook's {@code timeoutSeconds}
   * @param maxInFlight admission requests one replica works on at once; more are answered 429
   *     at once (before their bodies are read), so a flood cannot exhaust the heap
   * @param bodyReadTimeout how long reading one request body may take (the API server sends it
   *     at once; a slow sender is cut off)
   * @param nameOtherNamespacesHolders whether a denial names the Service holding a value when
   *     that Service is in another namespace than the one asking; false says only that the
   *     value is taken, so tenants do not learn each other's Service names
   * @param serverThreads event loops serving HTTP (admission calls, probes, metrics), one by
   *     default (see {@code ServerThreads})
   * @param callsPerConnection admission calls one connection serves; the answer to the last says
   *     {@code Connection: close}, so the API server opens a new one, which the Service in front
   *     of the replicas may send to another replica (nginx's {@code keepalive_requests}). The
   *     API server reuses the connection it used last, so without this one replica can serve
   *     nearly every call for as long as the connection lives. 0 never closes for this
   */
  public record Admission(
      @NotNull @DefaultValue("4s") Duration timeout,
      @Min(1) @DefaultValue("64") int maxInFlight,
      @NotNull @DefaultValue("10s") Duration bodyReadTimeout,
      @DefaultValue("true") boolean nameOtherNamespacesHolders,
      @Min(1) @DefaultValue("1") int serverThreads,
      @Min(0) @DefaultValue("1000") int callsPerConnection) {
  }

  /**
   * How subrange talks to the cluster it serves (in-cluster ServiceAccount, or KUBECONFIG).
   *
   * @param enabled use the API for range objects (ServiceCIDR, ClusterCIDR); false uses the
   *     configuration alone, as when their CRDs are not installed
   * @param startupTimeout how long startup waits for the API before giving up
   * @param reconcileInterval how often range objects' finalizers and status are brought up to date
   * @param namespace subrange's own namespace, where the store's ConfigMaps and the reconciler's
   *     Lease live; empty for the client's (the pod's namespace in a cluster)
   * @param commitLinger how long an allocation may wait for others to share its ConfigMap write
   *     (group commit): fewer writes for the API server, etcd and every replica's watch, for at
   *     most this much more latency per create
   * @param reserveAhead how many dynamic values a webhook replica reserves in one write ahead of
   *     requests, so creates asking only for dynamic values are answered without a write of their
   *     own; 0 (the default) reserves nothing ahead. Turn it on only once every replica runs a
   *     version that knows it: an older replica's validating webhook refuses values reserved ahead
   * @param reserveAheadFlush how long a value reserved ahead may be handed out without its
   *     Service named its holder on record: the pool's next batch names it otherwise; once due, the
   *     names go with the replica's next write, or half this later
   */
  public record Kubernetes(
      @DefaultValue("true") boolean enabled,
      @NotNull @DefaultValue("30s") Duration startupTimeout,
      @NotNull @DefaultValue("5s") Duration reconcileInterval,
      @NotNull @DefaultValue("") String namespace,
      @NotNull @DefaultValue("0ms") Duration commitLinger,
      @Min(0) @DefaultValue("0") int reserveAhead,
      @NotNull @DefaultValue("500ms") Duration reserveAheadFlush) {

    /** The configured namespace, else the client's ({@code clientNamespace}), else "default". */
    public String namespaceOr(String clientNamespace) {
      if (!namespace.isBlank()) {
        return namespace;
      }
      return clientNamespace == null || clientNamespace.isBlank() ? "default" : clientNamespace;
    }
  }

  /**
   * The reconciler: releases what deleted and changed objects gave up, frees what nothing owns,
   * repairs and rebuilds state from the cluster.
   *
   * @param orphanGrace how long a value may be held with no object carrying it before it is freed
   *     (an object may still be on its way through admission)
   * @param interval how often the cluster is compared with the store: what changed since the
   *     last pass, or everything when a full comparison is due
   * @param fullComparisonInterval how often a pass compares every object with every held value,
   *     not only what changed (kube-apiserver's repair loops run every three minutes)
   * @param leaseName the Lease that elects the one reconciler that acts
   * @param leaseDuration how long a leader's Lease lasts without renewal
   * @param releaseLinger how long a release of what a deleted or changed object held may wait for
   *     others to share its ConfigMap write (releases are not on any request's path; a burst of
   *     deletes otherwise writes about one ConfigMap per delete); a freed value is given again
   *     that much later. At most half of what a request's budget leaves for a write is used
   */
  public record Reconciler(
      @NotNull @DefaultValue("60s") Duration orphanGrace,
      @NotNull @DefaultValue("10s") Duration interval,
      @NotNull @DefaultValue("3m") Duration fullComparisonInterval,
      @NotEmpty @DefaultValue("subrange-reconciler") String leaseName,
      @NotNull @DefaultValue("15s") Duration leaseDuration,
      @NotNull @DefaultValue("500ms") Duration releaseLinger) {
  }

  /**
   * @param certDir folder holding {@code tls.crt} and {@code tls.key}; read at startup by
   *     {@code ServingTlsEnvironment} and re-read when the files change
   * @param clientCaFile a PEM CA; when set, only callers presenting a certificate it signed (the
   *     API server's webhook client certificate) are served (mTLS); empty serves anyone
   */
  public record Tls(@NotEmpty @DefaultValue("/etc/subrange/tls") String certDir,
      @NotNull @DefaultValue("") String clientCaFile) {
  }
}
