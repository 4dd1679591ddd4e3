package hostedhosts

import (
	"context"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/cloudwatch"
	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/kilnbuild/kiln/shared/kiln"
)

// The metrics the hosts' groups scale out on, one per hosted pool (the CDK stack's scaling
// policies read them): how many builds of the pool wait.
const (
	MetricNamespace    = "kiln"
	MetricWaitingWin64 = "WaitingWin64Builds"
	MetricWaitingLinux = "WaitingLinuxBuilds"
)

// WaitingMetric is the metric of a hosted pool's waiting builds ("": not a hosted pool).
func WaitingMetric(pool string) string {
	switch pool {
	case kiln.HostedPoolWin64:
		return MetricWaitingWin64
	case kiln.HostedPoolLinux:
		return MetricWaitingLinux
	}
	return ""
}

// CloudWatch is the part of the CloudWatch API the metric uses.
type CloudWatch interface {
	PutMetricData(ctx context.Context, in *cloudwatch.PutMetricDataInput, opts ...func(*cloudwatch.Options)) (*cloudwatch.PutMetricDataOutput, error)
}

// CloudWatchMetrics publishes a pool's waiting builds as kiln/<Metric> (WaitingMetric).
type CloudWatchMetrics struct {
	Client CloudWatch
	Metric string
}

// PublishWaiting puts one data point.
func (m *CloudWatchMetrics) PublishWaiting(ctx context.Context, waiting int) error {
	_, err := m.Client.PutMetricData(ctx, &cloudwatch.PutMetricDataInput{
		Namespace: aws.String(MetricNamespace),
		MetricData: []cwtypes.MetricDatum{{
			MetricName: aws.String(m.Metric), Value: aws.Float64(float64(waiting)), Unit: cwtypes.StandardUnitCount,
		}},
	})
	if err != nil {
		return fmt.Errorf("put metric %s/%s: %w", MetricNamespace, m.Metric, err)
	}
	return nil
}
